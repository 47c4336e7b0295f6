import { Presets, SingleBar } from 'cli-progress';
import type { CliIo } from './cli-context';

/** A progress bar over log positions on a terminal; none into a pipe or in tests. */
export function positionsBar(io: CliIo, label: string): SingleBar | undefined {
  return io.progress ? new SingleBar({ format: `${label} [{bar}] {value}/{total} positions`, hideCursor: true }, Presets.shades_classic) : undefined;
}
