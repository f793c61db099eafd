import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { encodeCsvBatch, type CsvOptions } from './csv-encoder.js';

/** Two batches, as the report writes them, checked by an independent parser (csv-parse). */
async function encode(rows: string[][], options: CsvOptions = {}): Promise<Buffer> {
  const half = Math.ceil(rows.length / 2);
  return Buffer.from(encodeCsvBatch(rows.slice(0, half), options, true) + encodeCsvBatch(rows.slice(half), options, false), 'utf8');
}

const tricky = [
  ['plain', 'comma, inside', 'quote "inside"', 'line\nbreak', 'carriage\rreturn', 'crlf\r\ninside'],
  ['नमस्ते, दुनिया', 'مرحبا "بالعالم"', 'emoji 😀', '', ' spaced ', '""'],
];

describe('CSV encoder (RFC 4180)', () => {
  it('round-trips commas, quotes, CR, LF, Hindi and Arabic through a CSV parser', async () => {
    const bytes = await encode(tricky);
    assert.deepEqual(parse(bytes.toString('utf8')), tricky);
  });

  it('ends records with CRLF, quotes only what needs it and doubles inner quotes', async () => {
    const text = (await encode([['a', 'b,c', 'say "hi"', 'x\ny']])).toString('utf8');
    assert.equal(text, 'a,"b,c","say ""hi""","x\ny"\r\n');
  });

  it('writes UTF-8 without a BOM by default and with one on request (Excel)', async () => {
    const plain = await encode([['हिन्दी']]);
    assert.deepEqual([...plain.subarray(0, 3)], [...Buffer.from('हि', 'utf8').subarray(0, 3)]);
    const withBom = await encode([['हिन्दी']], { bom: true });
    assert.deepEqual([...withBom.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.deepEqual(parse(withBom.toString('utf8'), { bom: true }), [['हिन्दी']]);
  });

  it('guards formula-looking cells only when asked', async () => {
    const cells = [['=HYPERLINK("x")', '+9198', '-1', '@SUM(A1)', '\tTAB', 'safe', 'a=b']];
    assert.deepEqual(parse((await encode(cells)).toString('utf8')), cells);
    assert.deepEqual(parse((await encode(cells, { formulaGuard: true })).toString('utf8')), [
      ["'=HYPERLINK(\"x\")", "'+9198", "'-1", "'@SUM(A1)", "'\tTAB", 'safe', 'a=b'],
    ]);
  });

  it('writes the BOM once, however many batches follow', async () => {
    const text = (await encode([['a'], ['b'], ['c']], { bom: true })).toString('utf8');
    assert.equal(text, '\uFEFFa\r\nb\r\nc\r\n');
  });
});
