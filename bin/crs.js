#!/usr/bin/env node
// `npx crs ...` / `npm run crs -- ...`: the compiled CLI (built by `npm ci` through the prepare script).
require('../dist/apps/cli/src/main.js');
