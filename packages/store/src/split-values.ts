/**
 * Reading hashes written by `lua/includes/compact-hash.lua`: a value longer than 64 bytes (Redis'
 * default `hash-max-listpack-value`) is stored as pieces `<field>~0`, `<field>~1`, … so the hash
 * stays listpack-encoded. The pieces are cut at byte boundaries (a UTF-8 character may straddle
 * two), so they are read as Buffers and joined before decoding.
 */

/** How a piece's field name ends: `~<index>`. */
const PIECE = /^(.*)~(\d+)$/;

/**
 * A hash read with `hgetallBuffer`, its split values joined and every value decoded as UTF-8.
 * A field stored whole wins over stray pieces of the same name.
 */
export function joinSplitValues(h: Record<string, Buffer>): Record<string, string> {
  const out: Record<string, string> = {};
  const pieces = new Map<string, Buffer[]>();
  for (const [field, value] of Object.entries(h)) {
    const m = PIECE.exec(field);
    if (!m) {
      out[field] = value.toString('utf8');
      continue;
    }
    const list = pieces.get(m[1]!) ?? [];
    list[Number(m[2])] = value;
    pieces.set(m[1]!, list);
  }
  for (const [field, list] of pieces) {
    if (field in out) continue;
    out[field] = Buffer.concat(list.filter((b) => b !== undefined)).toString('utf8');
  }
  return out;
}
