/**
 * The checksum of one part of a file that is read on its own, when first needed (a segment document's fields or
 * content, a keyword snapshot term's postings or document's fields): MurmurHash3, 32 bits. Each step takes a
 * 4-byte word through a bijection, so any change within one word (any single flipped bit) always changes it.
 */
export function partChecksum(bytes: Uint8Array): number {
  let hash = bytes.length;
  const words = bytes.length & ~3;
  for (let at = 0; at < words; at += 4) {
    let word = bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24);
    word = Math.imul(word, 0xcc9e2d51);
    word = (word << 15) | (word >>> 17);
    hash ^= Math.imul(word, 0x1b873593);
    hash = (hash << 13) | (hash >>> 19);
    hash = (Math.imul(hash, 5) + 0xe6546b64) | 0;
  }
  if (words < bytes.length) {
    let tail = 0;
    for (let at = bytes.length - 1; at >= words; at--) tail = (tail << 8) | bytes[at];
    tail = Math.imul(tail, 0xcc9e2d51);
    tail = (tail << 15) | (tail >>> 17);
    hash ^= Math.imul(tail, 0x1b873593);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
