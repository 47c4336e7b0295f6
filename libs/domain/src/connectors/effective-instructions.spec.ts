import { streams } from '../streams';
import { effectiveInstructions } from './effective-instructions';

describe('effective custom instructions', () => {
  it("the resource's own value when it has one, replacing the connector's (no merging)", () => {
    expect(effectiveInstructions('Resource.', 'Connector.')).toBe('Resource.');
    expect(effectiveInstructions('Resource.', null)).toBe('Resource.');
  });
  it("the connector's value when the resource has none, or an empty one", () => {
    expect(effectiveInstructions(null, 'Connector.')).toBe('Connector.');
    expect(effectiveInstructions(undefined, 'Connector.')).toBe('Connector.');
    expect(effectiveInstructions('', 'Connector.')).toBe('Connector.');
  });
  it('none when neither has a value', () => {
    expect(effectiveInstructions(null, null)).toBeNull();
    expect(effectiveInstructions('', '')).toBeNull();
  });
});

describe('connector stream names', () => {
  it('one stream per connector', () => {
    expect(streams.connector('c1')).toBe('connector-c1');
  });
  it('one stream per resource, named by the sha256 of its id, whatever characters the id holds', () => {
    expect(streams.connectorResource('c1', 'abc')).toBe('connector-resource-c1-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const odd = streams.connectorResource('c1', 'public."Order Lines"/-\u{1F600}');
    expect(odd).toMatch(/^connector-resource-c1-[0-9a-f]{64}$/);
    expect(streams.connectorResource('c1', 'a-b')).not.toBe(streams.connectorResource('c1', 'a_b'));
    expect(streams.connectorResource('c2', 'abc')).not.toBe(streams.connectorResource('c1', 'abc'));
  });
});
