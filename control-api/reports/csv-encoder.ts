import { stringify, type Stringifier } from 'csv-stringify';

/**
 * CSV per RFC 4180 through `csv-stringify` (the `csv` project's maintained streaming writer):
 * CRLF record ends (sec. 2.1), fields with a comma, a double quote, CR or LF enclosed in double
 * quotes with inner quotes doubled (sec. 2.5-2.7), UTF-8 text as is (Devanagari, Arabic).
 *
 * csv-stringify quotes a field containing a bare LF or CR only when told to (it checks for the
 * record delimiter, which is CRLF here), hence `quoted_match`.
 */
export interface CsvOptions {
  /**
   * Start with a UTF-8 byte order mark. Excel needs it to read the file as UTF-8 (otherwise
   * Hindi and Arabic turn into mojibake); most other CSV readers do not want it. Default false.
   */
  readonly bom?: boolean;
  /**
   * Formula-injection guard (OWASP "CSV injection"): a field starting with `=`, `+`, `-`, `@`,
   * TAB or CR gets a leading `'` so a spreadsheet shows it as text instead of running it. It
   * changes data (e.g. `+9198...` becomes `'+9198...`), so it is off by default: turn it on for
   * files people open in a spreadsheet, leave it off for programs. Default false.
   */
  readonly formulaGuard?: boolean;
}

export function createCsvEncoder(options: CsvOptions = {}): Stringifier {
  return stringify({
    bom: options.bom ?? false,
    escape_formulas: options.formulaGuard ?? false,
    record_delimiter: 'windows',
    quoted_match: /[\r\n]/,
  });
}
