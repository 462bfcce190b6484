;; Work an index does once per load, over every id or term (stores/indexes/load-kernel.ts), assembled by
;; scripts/build-wasm.ts: reading a segment's JSON array of ids in place and hashing every id into an
;; open-addressing table (id-table.ts), and checking a keyword snapshot's vocabulary (bm25-snapshot.ts). A fresh
;; process runs this before any JavaScript loop over the ids or terms could be optimised; compiled WebAssembly
;; does the same work several times faster from its first call.
;;
;; The memory holds the bytes read from address 0; the tables (uint32 each) lie where the caller says.
(module
  (import "env" "memory" (memory 0))
  ;; 1 while every byte of the ids read by `parse` is ASCII.
  (global $ascii (export "ascii") (mut i32) (i32.const 1))

  ;; The first address from `at` on (below `end`) that is not JSON whitespace.
  (func $skip (param $at i32) (param $end i32) (result i32)
    (local $byte i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $byte (i32.load8_u (local.get $at)))
        (br_if $done
          (i32.eqz
            (i32.or
              (i32.or (i32.eq (local.get $byte) (i32.const 0x20)) (i32.eq (local.get $byte) (i32.const 0x0a)))
              (i32.or (i32.eq (local.get $byte) (i32.const 0x0d)) (i32.eq (local.get $byte) (i32.const 0x09))))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $next)))
    (local.get $at))

  ;; The byte at `at`, or -1 at or past `end`.
  (func $byte (param $at i32) (param $end i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $at) (local.get $end))
      (then (i32.load8_u (local.get $at)))
      (else (i32.const -1))))

  ;; Read the bytes [0, length) as a JSON array of `count` strings with no escapes, writing where each string's
  ;; bytes start and end to the tables at `starts` and `ends`. Returns 0 when it is such an array; 1: not an
  ;; array of `count` items; 2: an item is not a non-empty string; 3: not valid JSON (an unterminated string, a
  ;; control character, trailing bytes); 4: a string holds an escape (the caller parses those ids instead). The
  ;; checks and their order are id-table.ts's, so the same input gets the same answer.
  (func (export "parse") (param $length i32) (param $count i32) (param $starts i32) (param $ends i32) (result i32)
    (local $at i32) (local $position i32) (local $start i32) (local $end i32) (local $byte i32)
    (global.set $ascii (i32.const 1))
    (local.set $at (call $skip (i32.const 0) (local.get $length)))
    (if (i32.ne (call $byte (local.get $at) (local.get $length)) (i32.const 0x5b)) (then (return (i32.const 1))))
    (local.set $at (call $skip (i32.add (local.get $at) (i32.const 1)) (local.get $length)))
    (block $read
      (loop $item
        (br_if $read (i32.ge_u (local.get $position) (local.get $count)))
        (if (i32.gt_u (local.get $position) (i32.const 0))
          (then
            (if (i32.ne (call $byte (local.get $at) (local.get $length)) (i32.const 0x2c)) (then (return (i32.const 1))))
            (local.set $at (call $skip (i32.add (local.get $at) (i32.const 1)) (local.get $length)))))
        (local.set $byte (call $byte (local.get $at) (local.get $length)))
        (if (i32.ne (local.get $byte) (i32.const 0x22))
          (then
            (if (i32.or (i32.eq (local.get $byte) (i32.const -1)) (i32.eq (local.get $byte) (i32.const 0x5d))) (then (return (i32.const 1))))
            (return (i32.const 2))))
        (local.set $start (i32.add (local.get $at) (i32.const 1)))
        (local.set $end (local.get $start))
        (block $closed
          (loop $char
            (br_if $closed (i32.ge_u (local.get $end) (local.get $length)))
            (local.set $byte (i32.load8_u (local.get $end)))
            (br_if $closed (i32.eq (local.get $byte) (i32.const 0x22)))
            (if (i32.eq (local.get $byte) (i32.const 0x5c)) (then (return (i32.const 4))))
            (if (i32.lt_u (local.get $byte) (i32.const 0x20)) (then (return (i32.const 3))))
            (if (i32.ge_u (local.get $byte) (i32.const 0x80)) (then (global.set $ascii (i32.const 0))))
            (local.set $end (i32.add (local.get $end) (i32.const 1)))
            (br $char)))
        (if (i32.ge_u (local.get $end) (local.get $length)) (then (return (i32.const 3))))
        (if (i32.eq (local.get $end) (local.get $start)) (then (return (i32.const 2))))
        (i32.store (i32.add (local.get $starts) (i32.shl (local.get $position) (i32.const 2))) (local.get $start))
        (i32.store (i32.add (local.get $ends) (i32.shl (local.get $position) (i32.const 2))) (local.get $end))
        (local.set $at (call $skip (i32.add (local.get $end) (i32.const 1)) (local.get $length)))
        (local.set $position (i32.add (local.get $position) (i32.const 1)))
        (br $item)))
    (if (i32.ne (call $byte (local.get $at) (local.get $length)) (i32.const 0x5d)) (then (return (i32.const 1))))
    (if (i32.ne (call $skip (i32.add (local.get $at) (i32.const 1)) (local.get $length)) (local.get $length)) (then (return (i32.const 3))))
    (i32.const 0))

  ;; Whether the bytes [first, firstEnd) equal the bytes from `second` on.
  (func $same (param $first i32) (param $firstEnd i32) (param $second i32) (result i32)
    (block $differ
      (loop $next
        (if (i32.ge_u (local.get $first) (local.get $firstEnd)) (then (return (i32.const 1))))
        (br_if $differ (i32.ne (i32.load8_u (local.get $first)) (i32.load8_u (local.get $second))))
        (local.set $first (i32.add (local.get $first) (i32.const 1)))
        (local.set $second (i32.add (local.get $second) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  ;; Hash the `count` ids (FNV-1a, 32 bits, over their bytes) into `hashes`, and place each in the zeroed slots
  ;; table at `slots` (`mask` + 1 slots, each a position + 1, linear probing). Returns -1, or the position of
  ;; the first id that an earlier position holds too.
  (func (export "index") (param $count i32) (param $starts i32) (param $ends i32) (param $hashes i32) (param $slots i32) (param $mask i32) (result i32)
    (local $position i32) (local $start i32) (local $end i32) (local $at i32) (local $hash i32) (local $slot i32)
    (local $held i32) (local $other i32)
    (block $done
      (loop $id
        (br_if $done (i32.ge_u (local.get $position) (local.get $count)))
        (local.set $start (i32.load (i32.add (local.get $starts) (i32.shl (local.get $position) (i32.const 2)))))
        (local.set $end (i32.load (i32.add (local.get $ends) (i32.shl (local.get $position) (i32.const 2)))))
        (local.set $hash (i32.const 0x811c9dc5))
        (local.set $at (local.get $start))
        (block $hashed
          (loop $byte
            (br_if $hashed (i32.ge_u (local.get $at) (local.get $end)))
            (local.set $hash (i32.mul (i32.xor (local.get $hash) (i32.load8_u (local.get $at))) (i32.const 0x01000193)))
            (local.set $at (i32.add (local.get $at) (i32.const 1)))
            (br $byte)))
        (i32.store (i32.add (local.get $hashes) (i32.shl (local.get $position) (i32.const 2))) (local.get $hash))
        (local.set $slot (i32.and (local.get $hash) (local.get $mask)))
        (block $placed
          (loop $probe
            (local.set $held (i32.load (i32.add (local.get $slots) (i32.shl (local.get $slot) (i32.const 2)))))
            (if (i32.eqz (local.get $held))
              (then
                (i32.store (i32.add (local.get $slots) (i32.shl (local.get $slot) (i32.const 2))) (i32.add (local.get $position) (i32.const 1)))
                (br $placed)))
            (local.set $other (i32.sub (local.get $held) (i32.const 1)))
            (if (i32.eq (i32.load (i32.add (local.get $hashes) (i32.shl (local.get $other) (i32.const 2)))) (local.get $hash))
              (then
                (local.set $at (i32.load (i32.add (local.get $starts) (i32.shl (local.get $other) (i32.const 2)))))
                (if (i32.eq
                      (i32.sub (i32.load (i32.add (local.get $ends) (i32.shl (local.get $other) (i32.const 2)))) (local.get $at))
                      (i32.sub (local.get $end) (local.get $start)))
                  (then (if (call $same (local.get $start) (local.get $end) (local.get $at)) (then (return (local.get $position))))))))
            (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (local.get $mask)))
            (br $probe)))
        (local.set $position (i32.add (local.get $position) (i32.const 1)))
        (br $id)))
    (i32.const -1))

  ;; A sorted vocabulary of `count` terms, all ASCII: term t is the bytes [offsets[t], offsets[t + 1]) from
  ;; address 0, and has the postings [postingStarts[t], postingStarts[t + 1]). Returns the first term that is
  ;; empty, has no postings, or does not sort strictly after the term before it (bytes compared as unsigned,
  ;; which for ASCII is the order of JavaScript's `<`), or -1 when there is none.
  (func (export "first_malformed_term") (param $offsets i32) (param $postingStarts i32) (param $count i32) (result i32)
    (local $term i32) (local $start i32) (local $end i32) (local $before i32) (local $at i32) (local $shared i32)
    (local $left i32) (local $right i32) (local $sorted i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $term) (local.get $count)))
        (local.set $start (i32.load (i32.add (local.get $offsets) (i32.shl (local.get $term) (i32.const 2)))))
        (local.set $end (i32.load (i32.add (local.get $offsets) (i32.shl (i32.add (local.get $term) (i32.const 1)) (i32.const 2)))))
        (if (i32.le_u (local.get $end) (local.get $start)) (then (return (local.get $term))))
        (if (i32.le_u
              (i32.load (i32.add (local.get $postingStarts) (i32.shl (i32.add (local.get $term) (i32.const 1)) (i32.const 2))))
              (i32.load (i32.add (local.get $postingStarts) (i32.shl (local.get $term) (i32.const 2)))))
          (then (return (local.get $term))))
        (if (i32.gt_u (local.get $term) (i32.const 0))
          (then
            ;; The term before is [before, start): compare over the shorter length, then the shorter sorts first.
            (local.set $before (i32.load (i32.add (local.get $offsets) (i32.shl (i32.sub (local.get $term) (i32.const 1)) (i32.const 2)))))
            (local.set $shared (i32.sub (local.get $start) (local.get $before)))
            (if (i32.lt_u (i32.sub (local.get $end) (local.get $start)) (local.get $shared))
              (then (local.set $shared (i32.sub (local.get $end) (local.get $start)))))
            (local.set $sorted (i32.const -1))
            (local.set $at (i32.const 0))
            (block $compared
              (loop $byte
                (br_if $compared (i32.ge_u (local.get $at) (local.get $shared)))
                (local.set $left (i32.load8_u (i32.add (local.get $before) (local.get $at))))
                (local.set $right (i32.load8_u (i32.add (local.get $start) (local.get $at))))
                (if (i32.ne (local.get $left) (local.get $right))
                  (then
                    (local.set $sorted (i32.lt_u (local.get $left) (local.get $right)))
                    (br $compared)))
                (local.set $at (i32.add (local.get $at) (i32.const 1)))
                (br $byte)))
            ;; Equal over the shared length: sorted when the term before is the shorter.
            (if (i32.eq (local.get $sorted) (i32.const -1))
              (then (local.set $sorted (i32.lt_u (i32.sub (local.get $start) (local.get $before)) (i32.sub (local.get $end) (local.get $start))))))
            (if (i32.eqz (local.get $sorted)) (then (return (local.get $term))))))
        (local.set $term (i32.add (local.get $term) (i32.const 1)))
        (br $next)))
    (i32.const -1))

  ;; For the ids of another table (`theirCount` of them: hashes, and starts and ends of their bytes, which lie
  ;; from `theirBase`), from position `from` on: the first that this table holds too (its hashes, starts and ends
  ;; of its bytes from address 0, and its `mask` + 1 slots). Returns that position, with this table's position of
  ;; the id in `shared`, or -1 when there is none.
  (global $shared (export "shared") (mut i32) (i32.const -1))
  (func (export "first_shared")
    (param $theirCount i32) (param $theirHashes i32) (param $theirStarts i32) (param $theirEnds i32) (param $theirBase i32)
    (param $ourHashes i32) (param $ourStarts i32) (param $ourEnds i32) (param $slots i32) (param $mask i32) (param $from i32)
    (result i32)
    (local $there i32) (local $hash i32) (local $slot i32) (local $held i32) (local $start i32) (local $end i32) (local $at i32)
    (local.set $there (local.get $from))
    (block $done
      (loop $id
        (br_if $done (i32.ge_u (local.get $there) (local.get $theirCount)))
        (local.set $hash (i32.load (i32.add (local.get $theirHashes) (i32.shl (local.get $there) (i32.const 2)))))
        (local.set $start (i32.add (local.get $theirBase) (i32.load (i32.add (local.get $theirStarts) (i32.shl (local.get $there) (i32.const 2))))))
        (local.set $end (i32.add (local.get $theirBase) (i32.load (i32.add (local.get $theirEnds) (i32.shl (local.get $there) (i32.const 2))))))
        (local.set $slot (i32.and (local.get $hash) (local.get $mask)))
        (block $absent
          (loop $probe
            (local.set $held (i32.load (i32.add (local.get $slots) (i32.shl (local.get $slot) (i32.const 2)))))
            (br_if $absent (i32.eqz (local.get $held)))
            (local.set $held (i32.sub (local.get $held) (i32.const 1)))
            (if (i32.eq (i32.load (i32.add (local.get $ourHashes) (i32.shl (local.get $held) (i32.const 2)))) (local.get $hash))
              (then
                (local.set $at (i32.load (i32.add (local.get $ourStarts) (i32.shl (local.get $held) (i32.const 2)))))
                (if (i32.eq
                      (i32.sub (i32.load (i32.add (local.get $ourEnds) (i32.shl (local.get $held) (i32.const 2)))) (local.get $at))
                      (i32.sub (local.get $end) (local.get $start)))
                  (then
                    (if (call $same (local.get $start) (local.get $end) (local.get $at))
                      (then
                        (global.set $shared (local.get $held))
                        (return (local.get $there))))))))
            (local.set $slot (i32.and (i32.add (local.get $slot) (i32.const 1)) (local.get $mask)))
            (br $probe)))
        (local.set $there (i32.add (local.get $there) (i32.const 1)))
        (br $id)))
    (i32.const -1))
)
