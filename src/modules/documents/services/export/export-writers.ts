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

/** Writes `chunk`, waiting for the response to drain (memory stays flat) or failing if the client went away. */
async function write(out: Writable, chunk: string): Promise<void> {
  if (out.write(chunk)) {
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const done = (): void => {
      out.off('close', gone);
      resolve();
    };
    const gone = (): void => {
      out.off('drain', done);
      reject(new Error('the client closed the export'));
    };
    out.once('drain', done);
    out.once('close', gone);
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

class CsvSink implements ExportSink {
  readonly tabular = true;
  constructor(private readonly out: Writable) {}

  async begin(_document: Record<string, unknown>, columns: string[]): Promise<void> {
    await write(this.out, stringify([columns.map(inertCsvCell)]));
  }

  /** A batch is encoded at once (the synchronous encoder) and written as one chunk, waiting for the client. */
  async records(batch: { cells: (string | number | boolean | null)[] }[]): Promise<void> {
    await write(this.out, stringify(batch.map((record) => record.cells.map(inertCsvCell)), { cast: { boolean: (value) => (value ? 'true' : 'false') } }));
  }

  async end(): Promise<void> {
    this.out.end();
  }
}

class XlsxSink implements ExportSink {
  readonly tabular = true;
  private readonly workbook: ExcelJS.stream.xlsx.WorkbookWriter;
  private sheet: ExcelJS.Worksheet | null = null;

  constructor(out: Writable) {
    // Streaming writer without shared strings or styles: each committed row is zipped and flushed at once.
    this.workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useSharedStrings: false, useStyles: false });
  }

  async begin(_document: Record<string, unknown>, columns: string[], recordsKey: string): Promise<void> {
    this.sheet = this.workbook.addWorksheet(recordsKey);
    this.sheet.addRow(columns).commit();
  }

  async records(batch: { cells: (string | number | boolean | null)[] }[]): Promise<void> {
    for (const record of batch) {
      this.sheet?.addRow(record.cells).commit();
    }
    // Let the zip stream flush between batches.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  async end(): Promise<void> {
    this.sheet?.commit();
    await this.workbook.commit();
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
