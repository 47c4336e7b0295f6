import { ConfigurationError } from '../../provider-errors';
import type { ResourceConfig, ResourceOption } from '../../provider.port';

/** What a channel resource may set under `options`. */
export const SLACK_RESOURCE_OPTIONS: ResourceOption[] = [
  {
    name: 'look_back_days',
    description:
      'How far before the newest message an earlier sync saw each sync reads the history again, to pick up edits and new thread replies to recent messages (default 7, 0 to 90). Older edits, late replies and back-dated messages are found by comparing the whole history with what is held.',
  },
  {
    name: 'page_size',
    description: 'Messages per conversations.history page, and so per checkpoint (default 200, 1 to 999). Apps under Slack\'s reduced limits for non-Marketplace apps use 15.',
  },
];

export interface ChannelOptions {
  lookBackSeconds: number;
  pageSize: number;
}

const DEFAULTS = { lookBackDays: 7, pageSize: 200 };

function wholeNumber(options: Readonly<Record<string, unknown>>, name: string, fallback: number, min: number, max: number, resourceId: string): number {
  const value = options[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ConfigurationError(`Option ${name} of channel ${resourceId} must be a whole number from ${min} to ${max}; it is ${JSON.stringify(value)}.`);
  }
  return value;
}

/** The resource's options with their defaults; an option out of range is a ConfigurationError naming it. */
export function channelOptions(resource: ResourceConfig): ChannelOptions {
  const options = resource.options ?? {};
  const known = new Set(SLACK_RESOURCE_OPTIONS.map((o) => o.name));
  const unknown = Object.keys(options).filter((k) => !known.has(k));
  if (unknown.length) throw new ConfigurationError(`Channel ${resource.resourceId} has unknown options ${unknown.join(', ')}; the known ones are ${[...known].join(', ')}.`);
  return {
    lookBackSeconds: wholeNumber(options, 'look_back_days', DEFAULTS.lookBackDays, 0, 90, resource.resourceId) * 86_400,
    pageSize: wholeNumber(options, 'page_size', DEFAULTS.pageSize, 1, 999, resource.resourceId),
  };
}
