import { lineRanges, paragraphRanges, sentenceRanges, wordRanges } from './text-ranges';

const sentences = (text: string) => sentenceRanges(text, 0, text.length).map((r) => text.slice(r.start, r.end));

describe('sentenceRanges', () => {
  it('splits on sentence ends followed by space', () => {
    expect(sentences('One here. Two there! Three? Four')).toEqual(['One here.', 'Two there!', 'Three?', 'Four']);
  });

  it('keeps abbreviations, initials and decimals inside the sentence', () => {
    expect(sentences('Dr. Rivera met J. R. Smith, e.g. at 3.5 p.m. on Monday. Then she left.')).toEqual([
      'Dr. Rivera met J. R. Smith, e.g. at 3.5 p.m. on Monday.',
      'Then she left.',
    ]);
  });

  it('does not end a sentence before a lowercase word', () => {
    expect(sentences('See fig. three for details. Next.')).toEqual(['See fig. three for details.', 'Next.']);
    expect(sentences('It was big... really big. Yes.')).toEqual(['It was big... really big.', 'Yes.']);
  });

  it('keeps closing quotes with their sentence', () => {
    expect(sentences('He said "stop." Then "go!" And so on')).toEqual(['He said "stop."', 'Then "go!"', 'And so on']);
  });

  it('treats list items as separate units', () => {
    expect(sentences('Steps:\n- install it\n- run it\n1. check')).toEqual(['Steps:', '- install it', '- run it', '1. check']);
  });

  it('splits CJK text on ideographic full stops', () => {
    expect(sentences('今天很好。明天下雨！')).toEqual(['今天很好。', '明天下雨！']);
  });

  it('reports offsets into the original text within the given range', () => {
    const text = 'xx First one. Second one. yy';
    const ranges = sentenceRanges(text, 3, 25);
    expect(ranges.map((r) => text.slice(r.start, r.end))).toEqual(['First one.', 'Second one.']);
  });
});

describe('paragraph, line and word ranges', () => {
  it('splits paragraphs on blank lines, including whitespace-only ones', () => {
    const text = 'a b\nc\n\n  \n d \r\n\r\ne';
    expect(paragraphRanges(text, 0, text.length).map((r) => text.slice(r.start, r.end))).toEqual(['a b\nc', 'd', 'e']);
  });

  it('splits lines and words, trimmed', () => {
    const text = ' one two \nthree  ';
    expect(lineRanges(text, 0, text.length).map((r) => text.slice(r.start, r.end))).toEqual(['one two', 'three']);
    expect(wordRanges(text, 0, text.length).map((r) => text.slice(r.start, r.end))).toEqual(['one', 'two', 'three']);
  });
});
