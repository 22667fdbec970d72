import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import ExcelJS from 'exceljs';
import type { StoredValue } from '../../fields/field.types.js';
import { assertNever } from '../../../../common/assert-never.js';

export const EXPORT_FORMATS = ['json', 'ndjson', 'csv', 'xlsx'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  json: 'application/json; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/**
 * Where an export goes, in any format: a header (the document part: metadata, properties — or the revision for
 * `what=changes`), then records in batches, then the end. Tabular formats (csv, xlsx) write `columns` as the header
 * row and each record's `cells`; json and ndjson write the `document` object and each record's `json`.
 */
export interface ExportSink {
  /** csv and xlsx write `cells`; json and ndjson `json` (only the one needed is built). */
  readonly tabular: boolean;
  begin(document: Record<string, unknown>, columns: string[], recordsKey: string): Promise<void>;
  records(batch: { json: unknown; cells: (string | number | boolean | null)[] }[]): Promise<void>;
  end(): Promise<void>;
}

function clientGone(): Error {
  return new Error('the client closed the export');
}

/**
 * Waits until the response drained (memory stays flat), or fails if the client went away. A response already closed
 * emits neither 'drain' nor 'close' again: it is checked first, or the export would wait for ever, holding its
 * transaction and pooled connection (a client leaving before the first byte did that).
 */
async function drained(out: Writable): Promise<void> {
  if (out.destroyed) {
    throw clientGone();
  }
  if (!out.writableNeedDrain) {
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const done = (): void => {
      out.off('close', gone);
      resolve();
    };
    const gone = (): void => {
      out.off('drain', done);
      reject(clientGone());
    };
    out.once('drain', done);
    out.once('close', gone);
  });
}

/** Writes `chunk`, waiting for the response to drain or failing if the client went away. */
async function write(out: Writable, chunk: string): Promise<void> {
  if (out.destroyed) {
    throw clientGone();
  }
  if (!out.write(chunk)) {
    await drained(out);
  }
}

/** `work`, or a failure as soon as the client goes away (a closed response never finishes what is written to it). */
function unlessClientGone<T>(out: Writable, work: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (out.destroyed) {
      reject(clientGone());
      return;
    }
    const gone = (): void => reject(clientGone());
    out.once('close', gone);
    work.then(
      (value) => {
        out.off('close', gone);
        resolve(value);
      },
      (error: unknown) => {
        out.off('close', gone);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** A cell of a tabular export: primitives as they are, anything else as JSON. */
export function cellOf(value: StoredValue | undefined): string | number | boolean | null {
  if (value === undefined || value === null) {
    return null;
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return value;
  }
  return JSON.stringify(value);
}

class JsonSink implements ExportSink {
  readonly tabular = false;
  private first = true;
  constructor(private readonly out: Writable) {}

  async begin(document: Record<string, unknown>, _columns: string[], recordsKey: string): Promise<void> {
    const head = JSON.stringify({ ...document, [recordsKey]: [] });
    // The document object with its record array left open: records follow one by one.
    await write(this.out, head.slice(0, head.length - 2));
  }

  async records(batch: { json: unknown }[]): Promise<void> {
    let chunk = '';
    for (const record of batch) {
      chunk += (this.first ? '' : ',') + JSON.stringify(record.json);
      this.first = false;
    }
    await write(this.out, chunk);
  }

  async end(): Promise<void> {
    await write(this.out, ']}');
    this.out.end();
  }
}

class NdjsonSink implements ExportSink {
  readonly tabular = false;
  constructor(private readonly out: Writable) {}

  async begin(document: Record<string, unknown>): Promise<void> {
    await write(this.out, `${JSON.stringify({ type: 'document', ...document })}\n`);
  }

  async records(batch: { json: unknown }[]): Promise<void> {
    await write(this.out, batch.map((record) => `${JSON.stringify(record.json)}\n`).join(''));
  }

  async end(): Promise<void> {
    this.out.end();
  }
}

/** First characters a spreadsheet reads as the start of a formula (OWASP, "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A csv cell a spreadsheet opening the file cannot run as a formula: text starting with `=`, `+`, `-`, `@`, a tab or a
 * carriage return gets a leading single quote (OWASP's advice). Numbers and booleans stay as they are: a negative
 * number is written as a number and read back as one.
 */
export function inertCsvCell<T extends string | number | boolean | null>(cell: T): T | string {
  return typeof cell === 'string' && FORMULA_START.test(cell) ? `'${cell}` : cell;
}

/**
 * csv-stringify quotes a cell holding its record delimiter (`\n`) but not a lone carriage return, which spreadsheets
 * and csv readers take as the end of the record (RFC 4180 quotes both): such cells are quoted too.
 */
const CSV_OPTIONS = { quoted_match: /\r/ };

class CsvSink implements ExportSink {
  readonly tabular = true;
  constructor(private readonly out: Writable) {}

  async begin(_document: Record<string, unknown>, columns: string[]): Promise<void> {
    await write(this.out, stringify([columns.map(inertCsvCell)], CSV_OPTIONS));
  }

  /** A batch is encoded at once (the synchronous encoder) and written as one chunk, waiting for the client. */
  async records(batch: { cells: (string | number | boolean | null)[] }[]): Promise<void> {
    await write(
      this.out,
      stringify(
        batch.map((record) => record.cells.map(inertCsvCell)),
        { ...CSV_OPTIONS, cast: { boolean: (value) => (value ? 'true' : 'false') } },
      ),
    );
  }

  async end(): Promise<void> {
    this.out.end();
  }
}

/** The most characters (UTF-16 units) a spreadsheet cell holds; Excel reports a file with a longer one as damaged. */
export const XLSX_MAX_CELL_LENGTH = 32767;

/**
 * ECMA-376 `ST_Xstring` escaping of a cell text: XML 1.0 cannot hold the control characters U+0001–U+0008,
 * U+000B, U+000C and U+000E–U+001F (exceljs drops them), and an XML reader turns a carriage return into a line
 * feed, so they are written as `_xHHHH_`, the form Excel writes and spreadsheet readers turn back into the
 * character; a text that itself looks like `_xHHHH_` has its `_` written as `_x005F_` so it is read as written.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const XLSX_UNSAFE = /[\u0001-\u0008\u000B-\u001F]/g;

function xlsxEscape(text: string): string {
  return text
    .replace(/_(x[0-9A-Fa-f]{4}_)/g, '_x005F_$1')
    .replace(XLSX_UNSAFE, (char) => `_x${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`);
}

/**
 * An xlsx cell: text longer than a cell holds is cut at the limit, never inside a surrogate pair (csv and json keep
 * it whole), then escaped (`xlsxEscape`) so the cell shows the characters of the value.
 */
export function xlsxCell<T extends string | number | boolean | null>(cell: T): T | string {
  if (typeof cell !== 'string') {
    return cell;
  }
  if (cell.length <= XLSX_MAX_CELL_LENGTH) {
    return xlsxEscape(cell);
  }
  const cut = /[\uD800-\uDBFF]/.test(cell.charAt(XLSX_MAX_CELL_LENGTH - 1)) ? XLSX_MAX_CELL_LENGTH - 1 : XLSX_MAX_CELL_LENGTH;
  return xlsxEscape(cell.slice(0, cut));
}

class XlsxSink implements ExportSink {
  readonly tabular = true;
  private readonly workbook: ExcelJS.stream.xlsx.WorkbookWriter;
  private sheet: ExcelJS.Worksheet | null = null;

  constructor(private readonly out: Writable) {
    // Streaming writer without shared strings or styles: each committed row is zipped and flushed at once.
    this.workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useSharedStrings: false, useStyles: false });
  }

  async begin(_document: Record<string, unknown>, columns: string[], recordsKey: string): Promise<void> {
    if (this.out.destroyed) {
      throw clientGone();
    }
    this.sheet = this.workbook.addWorksheet(recordsKey);
    // Escaped as every cell is: a field id may itself read as an escape (`_x0041_` would show as "A").
    this.sheet.addRow(columns.map(xlsxCell)).commit();
  }

  async records(batch: { cells: (string | number | boolean | null)[] }[]): Promise<void> {
    for (const record of batch) {
      this.sheet?.addRow(record.cells.map(xlsxCell)).commit();
    }
    // Let the zip stream flush between batches, then wait for the client (or stop if it went away).
    await new Promise<void>((resolve) => setImmediate(resolve));
    await drained(this.out);
  }

  async end(): Promise<void> {
    this.sheet?.commit();
    await unlessClientGone(this.out, this.workbook.commit());
  }
}

export function sinkFor(format: ExportFormat, out: Writable): ExportSink {
  switch (format) {
    case 'json':
      return new JsonSink(out);
    case 'ndjson':
      return new NdjsonSink(out);
    case 'csv':
      return new CsvSink(out);
    case 'xlsx':
      return new XlsxSink(out);
    default:
      return assertNever(format);
  }
}
