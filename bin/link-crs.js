#!/usr/bin/env node
// npm does not link a root package's own `bin` into node_modules/.bin, so `npx crs` would look on the registry.
// The prepare script links it here, so `npx crs ...` runs this project's CLI.
const { mkdirSync, symlinkSync, rmSync, chmodSync } = require('node:fs');
const { join, relative } = require('node:path');
const binDir = join(__dirname, '..', 'node_modules', '.bin');
const target = join(__dirname, 'crs.js');
mkdirSync(binDir, { recursive: true });
const link = join(binDir, 'crs');
rmSync(link, { force: true });
symlinkSync(relative(binDir, target), link);
chmodSync(target, 0o755);
