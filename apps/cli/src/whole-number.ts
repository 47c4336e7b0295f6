import { InvalidArgumentError } from 'commander';

/** An option parser for a whole number (0, 1, 2, ...): anything else stops the command with a clear error. */
export function wholeNumber(option: string) {
  return (value: string): string => {
    if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError(`${option} must be a whole number (0, 1, 2, ...), not '${value}'`);
    return value.trim();
  };
}
