// Reads a Parquet file with hyparquet (npm), a reader cairn did not write,
// and prints its schema's column names and its rows as one JSON object:
//   node read.mjs FILE.parquet
// BigInt values (64-bit integers) are printed as numbers.
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from "hyparquet";

const file = process.argv[2];
if (!file) {
  console.error("usage: node read.mjs FILE.parquet");
  process.exit(2);
}
const buf = await asyncBufferFromFile(file);
const meta = await parquetMetadataAsync(buf);
const columns = parquetSchema(meta).children.map((c) => c.element.name);
const rows = await parquetReadObjects({ file: buf });
const kv = Object.fromEntries((meta.key_value_metadata || []).map((e) => [e.key, e.value]));
console.log(JSON.stringify({ columns, rows, num_rows: Number(meta.num_rows), key_value: kv },
  (_, v) => (typeof v === "bigint" ? Number(v) : v)));
