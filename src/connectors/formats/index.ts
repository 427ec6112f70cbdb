export { type CsvParseResult, encodeCsvField, encodeCsvRow, parseCsvRecord } from './csv.js';
export { type RecordFraming, RecordScanner, type ScannedRecord } from './record-scanner.js';
export {
  type DecodedRecord,
  decodeRecord,
  type EncodedRecord,
  encodeRecord,
  TEXT_FORMATS,
  type TextFormat,
} from './text-format.js';
