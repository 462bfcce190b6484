;; Axon vector search kernel: dot products and a bounded top-K min-heap fused in one pass over rows, and
;; (at the end) the HNSW graph walk: a whole search, the linking of a node, and the unlinking of one.
;;
;; Assembled by `npx tsx scripts/build-wasm.ts` into search-kernel.wasm (committed; a test checks the two agree).
;; The scans are driven by stores/indexes/simd/simd-index.ts and the graph walk by stores/indexes/hnsw-index.ts,
;; which lays its regions out in a memory of its own or in a region of a space's memory (HnswIndex.over):
;;   - float rows are `stride` bytes apart, stride a multiple of 16, the padding zero-filled;
;;   - int8 rows likewise, with one float scale per row, and the query widened to int16 (2 bytes per code);
;;   - every region ends at least 64 bytes before the memory does, so no pointer formed here wraps.
;;
;; The heap keeps the best `capacity` (row, score) pairs seen so far; its root is the worst of them, so a
;; new row is compared with one number and, nearly always, dropped there. "Worse" means a lower score, or
;; the same score and a higher row: the tie rule of the JavaScript scanTopK.
;;
;; Both scans return the heap's size and leave the heap, unsorted, in memory for the caller; score_f64
;; then re-scores the kept rows exactly. The row of
;; scan position i is i, or candidates[i] when use_candidates is 1 (a filtered scan).
(module
  (import "env" "memory" (memory 1))

  ;; The heap of the scan in progress. $worst_score is -infinity until the heap is full, so every row is
  ;; offered while it fills; afterwards it is the root's score.
  (global $heap_rows (mut i32) (i32.const 0))
  (global $heap_scores (mut i32) (i32.const 0))
  (global $heap_capacity (mut i32) (i32.const 0))
  (global $heap_size (mut i32) (i32.const 0))
  (global $worst_score (mut f32) (f32.const -inf))
  (global $worst_row (mut i32) (i32.const 0))

  (func $heap_reset (param $rows i32) (param $scores i32) (param $capacity i32)
    (global.set $heap_rows (local.get $rows))
    (global.set $heap_scores (local.get $scores))
    (global.set $heap_capacity (local.get $capacity))
    (global.set $heap_size (i32.const 0))
    (global.set $worst_score (f32.const -inf))
    (global.set $worst_row (i32.const 0)))

  (func $is_worse (param $left_score f32) (param $left_row i32) (param $right_score f32) (param $right_row i32) (result i32)
    (i32.or
      (f32.lt (local.get $left_score) (local.get $right_score))
      (i32.and
        (f32.eq (local.get $left_score) (local.get $right_score))
        (i32.gt_s (local.get $left_row) (local.get $right_row)))))

  ;; Called only for a score at least the worst kept one: add it while the heap fills, else replace the
  ;; root when it beats it (ties go to the lower row), and return the new worst score.
  (func $offer (param $row i32) (param $score f32) (result f32)
    (local $rows i32) (local $scores i32) (local $position i32) (local $next i32) (local $size i32)
    (local.set $rows (global.get $heap_rows))
    (local.set $scores (global.get $heap_scores))
    (local.set $size (global.get $heap_size))
    (if (i32.lt_u (local.get $size) (global.get $heap_capacity))
      (then
        ;; Sift up from the new last entry.
        (local.set $position (local.get $size))
        (block $placed
          (loop $up
            (br_if $placed (i32.eqz (local.get $position)))
            (local.set $next (i32.shr_u (i32.sub (local.get $position) (i32.const 1)) (i32.const 1)))
            (br_if $placed
              (i32.eqz
                (call $is_worse
                  (local.get $score) (local.get $row)
                  (f32.load (i32.add (local.get $scores) (i32.shl (local.get $next) (i32.const 2))))
                  (i32.load (i32.add (local.get $rows) (i32.shl (local.get $next) (i32.const 2)))))))
            (call $move (local.get $rows) (local.get $scores) (local.get $next) (local.get $position))
            (local.set $position (local.get $next))
            (br $up)))
        (local.set $size (i32.add (local.get $size) (i32.const 1)))
        (global.set $heap_size (local.get $size)))
      (else
        (if (i32.eqz (call $is_worse (global.get $worst_score) (global.get $worst_row) (local.get $score) (local.get $row)))
          (then (return (global.get $worst_score))))
        ;; Sift down from the root, which the new entry replaces.
        (block $placed
          (loop $down
            (local.set $next (i32.add (i32.shl (local.get $position) (i32.const 1)) (i32.const 1)))
            (br_if $placed (i32.ge_u (local.get $next) (local.get $size)))
            (if (i32.lt_u (i32.add (local.get $next) (i32.const 1)) (local.get $size))
              (then
                (if (call $is_worse
                      (f32.load offset=4 (i32.add (local.get $scores) (i32.shl (local.get $next) (i32.const 2))))
                      (i32.load offset=4 (i32.add (local.get $rows) (i32.shl (local.get $next) (i32.const 2))))
                      (f32.load (i32.add (local.get $scores) (i32.shl (local.get $next) (i32.const 2))))
                      (i32.load (i32.add (local.get $rows) (i32.shl (local.get $next) (i32.const 2)))))
                  (then (local.set $next (i32.add (local.get $next) (i32.const 1)))))))
            (br_if $placed
              (i32.eqz
                (call $is_worse
                  (f32.load (i32.add (local.get $scores) (i32.shl (local.get $next) (i32.const 2))))
                  (i32.load (i32.add (local.get $rows) (i32.shl (local.get $next) (i32.const 2))))
                  (local.get $score) (local.get $row))))
            (call $move (local.get $rows) (local.get $scores) (local.get $next) (local.get $position))
            (local.set $position (local.get $next))
            (br $down)))))
    (i32.store (i32.add (local.get $rows) (i32.shl (local.get $position) (i32.const 2))) (local.get $row))
    (f32.store (i32.add (local.get $scores) (i32.shl (local.get $position) (i32.const 2))) (local.get $score))
    (if (i32.eq (local.get $size) (global.get $heap_capacity))
      (then
        (global.set $worst_score (f32.load (local.get $scores)))
        (global.set $worst_row (i32.load (local.get $rows)))))
    (global.get $worst_score))

  ;; Copy heap entry `from` to position `to`.
  (func $move (param $rows i32) (param $scores i32) (param $from i32) (param $to i32)
    (i32.store (i32.add (local.get $rows) (i32.shl (local.get $to) (i32.const 2)))
      (i32.load (i32.add (local.get $rows) (i32.shl (local.get $from) (i32.const 2)))))
    (f32.store (i32.add (local.get $scores) (i32.shl (local.get $to) (i32.const 2)))
      (f32.load (i32.add (local.get $scores) (i32.shl (local.get $from) (i32.const 2))))))

  ;; Exact float32 scan. The loop reads memory at its bandwidth limit, so one row at a time suffices.
  (func (export "search_f32")
    (param $vectors i32) (param $stride i32) (param $query i32)
    (param $candidates i32) (param $use_candidates i32) (param $count i32)
    (param $heap_rows i32) (param $heap_scores i32) (param $capacity i32)
    (result i32)
    (local $index i32) (local $row i32) (local $pointer i32) (local $query_pointer i32)
    (local $wide_end i32) (local $end i32)
    (local $sum0 v128) (local $sum1 v128) (local $sum2 v128) (local $sum3 v128)
    (local $score f32) (local $worst f32)
    (call $heap_reset (local.get $heap_rows) (local.get $heap_scores) (local.get $capacity))
    (local.set $worst (f32.const -inf))
    (block $scanned
      (loop $next_row
        (br_if $scanned (i32.ge_u (local.get $index) (local.get $count)))
        (local.set $row (if (result i32) (local.get $use_candidates) (then (i32.load (i32.add (local.get $candidates) (i32.shl (local.get $index) (i32.const 2))))) (else (local.get $index))))
        (local.set $pointer (i32.add (local.get $vectors) (i32.mul (local.get $row) (local.get $stride))))
        (local.set $end (i32.add (local.get $pointer) (local.get $stride)))
        (local.set $wide_end (i32.add (local.get $pointer) (i32.and (local.get $stride) (i32.const -64))))
        (local.set $query_pointer (local.get $query))
        ;; Four independent sums, 16 floats a step: the adds overlap instead of waiting on one chain.
        (local.set $sum0 (v128.const i32x4 0 0 0 0))
        (local.set $sum1 (v128.const i32x4 0 0 0 0))
        (local.set $sum2 (v128.const i32x4 0 0 0 0))
        (local.set $sum3 (v128.const i32x4 0 0 0 0))
        (block $wide_done
          (br_if $wide_done (i32.ge_u (local.get $pointer) (local.get $wide_end)))
          (loop $wide
            (local.set $sum0 (f32x4.add (local.get $sum0)
              (f32x4.mul (v128.load (local.get $pointer)) (v128.load (local.get $query_pointer)))))
            (local.set $sum1 (f32x4.add (local.get $sum1)
              (f32x4.mul (v128.load offset=16 (local.get $pointer)) (v128.load offset=16 (local.get $query_pointer)))))
            (local.set $sum2 (f32x4.add (local.get $sum2)
              (f32x4.mul (v128.load offset=32 (local.get $pointer)) (v128.load offset=32 (local.get $query_pointer)))))
            (local.set $sum3 (f32x4.add (local.get $sum3)
              (f32x4.mul (v128.load offset=48 (local.get $pointer)) (v128.load offset=48 (local.get $query_pointer)))))
            (local.set $pointer (i32.add (local.get $pointer) (i32.const 64)))
            (local.set $query_pointer (i32.add (local.get $query_pointer) (i32.const 64)))
            (br_if $wide (i32.lt_u (local.get $pointer) (local.get $wide_end)))))
        (block $tail_done
          (loop $tail
            (br_if $tail_done (i32.ge_u (local.get $pointer) (local.get $end)))
            (local.set $sum0 (f32x4.add (local.get $sum0)
              (f32x4.mul (v128.load (local.get $pointer)) (v128.load (local.get $query_pointer)))))
            (local.set $pointer (i32.add (local.get $pointer) (i32.const 16)))
            (local.set $query_pointer (i32.add (local.get $query_pointer) (i32.const 16)))
            (br $tail)))
        (local.set $sum0 (f32x4.add
          (f32x4.add (local.get $sum0) (local.get $sum1))
          (f32x4.add (local.get $sum2) (local.get $sum3))))
        (local.set $sum0 (f32x4.add (local.get $sum0)
          (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $sum0) (local.get $sum0))))
        (local.set $score (f32.add (f32x4.extract_lane 0 (local.get $sum0)) (f32x4.extract_lane 1 (local.get $sum0))))
        (if (f32.ge (local.get $score) (local.get $worst))
          (then (local.set $worst (call $offer (local.get $row) (local.get $score)))))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br $next_row)))
    (global.get $heap_size))

;; Exact float64 scores of rows, written to out[index] (8 bytes each), with the arithmetic of the
  ;; JavaScript scanTopK so the results are bit-identical: products of float32 values are exact in float64,
  ;; four running sums take positions 0, 1, 2, 3 (mod 4), the positions past the last multiple of 4 go to
  ;; the first sum, and the total is (sum0 + sum1) + (sum2 + sum3).
  (func (export "score_f64")
    (param $vectors i32) (param $stride i32) (param $dimensions i32) (param $query i32)
    (param $candidates i32) (param $use_candidates i32) (param $count i32) (param $out i32)
    (local $index i32) (local $row i32)
    (block $scored
      (loop $next_row
        (br_if $scored (i32.ge_u (local.get $index) (local.get $count)))
        (local.set $row
          (if (result i32) (local.get $use_candidates)
            (then (i32.load (i32.add (local.get $candidates) (i32.shl (local.get $index) (i32.const 2)))))
            (else (local.get $index))))
        (f64.store (i32.add (local.get $out) (i32.shl (local.get $index) (i32.const 3)))
          (call $exact_dot
            (i32.add (local.get $vectors) (i32.mul (local.get $row) (local.get $stride)))
            (local.get $query) (local.get $dimensions)))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br $next_row))))

  ;; The float64 dot product of the `dimensions` floats at `pointer` with those at `query`, summed as
  ;; score_f64 describes.
  (func $exact_dot (param $pointer i32) (param $query_pointer i32) (param $dimensions i32) (result f64)
    (local $grouped_end i32) (local $end i32)
    (local $sum01 v128) (local $sum23 v128) (local $values v128) (local $weights v128) (local $sum0 f64)
    (local.set $grouped_end (i32.add (local.get $pointer) (i32.shl (i32.and (local.get $dimensions) (i32.const -4)) (i32.const 2))))
    (local.set $end (i32.add (local.get $pointer) (i32.shl (local.get $dimensions) (i32.const 2))))
    (block $grouped_done
      (loop $grouped
        (br_if $grouped_done (i32.ge_u (local.get $pointer) (local.get $grouped_end)))
        (local.set $values (v128.load (local.get $pointer)))
        (local.set $weights (v128.load (local.get $query_pointer)))
        (local.set $sum01 (f64x2.add (local.get $sum01)
          (f64x2.mul (f64x2.promote_low_f32x4 (local.get $values)) (f64x2.promote_low_f32x4 (local.get $weights)))))
        (local.set $sum23 (f64x2.add (local.get $sum23)
          (f64x2.mul
            (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $values) (local.get $values)))
            (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $weights) (local.get $weights))))))
        (local.set $pointer (i32.add (local.get $pointer) (i32.const 16)))
        (local.set $query_pointer (i32.add (local.get $query_pointer) (i32.const 16)))
        (br $grouped)))
    (local.set $sum0 (f64x2.extract_lane 0 (local.get $sum01)))
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.ge_u (local.get $pointer) (local.get $end)))
        (local.set $sum0 (f64.add (local.get $sum0)
          (f64.mul (f64.promote_f32 (f32.load (local.get $pointer))) (f64.promote_f32 (f32.load (local.get $query_pointer))))))
        (local.set $pointer (i32.add (local.get $pointer) (i32.const 4)))
        (local.set $query_pointer (i32.add (local.get $query_pointer) (i32.const 4)))
        (br $tail)))
    (f64.add
      (f64.add (local.get $sum0) (f64x2.extract_lane 1 (local.get $sum01)))
      (f64.add (f64x2.extract_lane 0 (local.get $sum23)) (f64x2.extract_lane 1 (local.get $sum23)))))

  ;; Approximate int8 scan. A row's score is scales[row] times the integer dot product of its codes with
  ;; the query, which is widened to int16 once per search: 8 codes then cost one widening load
  ;; (v128.load8x8_s) and one pairwise multiply-add (i32x4.dot_i16x8_s) into 32-bit sums.
  ;;
  ;; Those multiplies, not memory, limit this scan, so codes are stored interleaved by blocks of four rows
  ;; (for each 8 codes: row 0's, row 1's, row 2's, row 3's) and a block is scored in one pass that loads
  ;; each query block once for all four rows, reading memory in order. That measured 30% faster than
  ;; row by row; four separate row pointers measured slower (V8 spilled the extra sums to the stack).
  ;; The code of row r, position i is at codes + (r >> 2) * 4 * stride + (i >> 3) * 32 + (r & 3) * 8 + (i & 7).
  (func (export "search_i8")
    (param $codes i32) (param $stride i32) (param $scales i32) (param $query i32)
    (param $candidates i32) (param $use_candidates i32) (param $count i32)
    (param $heap_rows i32) (param $heap_scores i32) (param $capacity i32)
    (result i32)
    (local $index i32) (local $row i32) (local $step i32) (local $worst f32) (local $query_end i32) (local $block_bytes i32)
    (local $scores v128) (local $score f32)
    (call $heap_reset (local.get $heap_rows) (local.get $heap_scores) (local.get $capacity))
    (local.set $worst (f32.const -inf))
    (local.set $query_end (i32.add (local.get $query) (i32.shl (local.get $stride) (i32.const 1))))
    (local.set $block_bytes (i32.shl (local.get $stride) (i32.const 2)))
    (block $scanned
      (loop $next
        (br_if $scanned (i32.ge_u (local.get $index) (local.get $count)))
        (local.set $row
          (if (result i32) (local.get $use_candidates)
            (then (i32.load (i32.add (local.get $candidates) (i32.shl (local.get $index) (i32.const 2)))))
            (else (local.get $index))))
        ;; A whole block when the next four positions are its four rows, in order: always for a full scan
        ;; (a last, partial block included: the rows past `count` are scored but never offered), and for
        ;; the dense runs of a candidate list.
        (local.set $step (i32.const 1))
        (if (i32.eqz (i32.and (local.get $row) (i32.const 3)))
          (then
            (if (i32.eqz (local.get $use_candidates))
              (then (local.set $step (i32.const 4)))
              (else
                (if (i32.le_u (i32.add (local.get $index) (i32.const 4)) (local.get $count))
                  (then
                    (if (i32.and
                          (i32.and
                            (i32.eq (i32.load offset=4 (i32.add (local.get $candidates) (i32.shl (local.get $index) (i32.const 2)))) (i32.add (local.get $row) (i32.const 1)))
                            (i32.eq (i32.load offset=8 (i32.add (local.get $candidates) (i32.shl (local.get $index) (i32.const 2)))) (i32.add (local.get $row) (i32.const 2))))
                          (i32.eq (i32.load offset=12 (i32.add (local.get $candidates) (i32.shl (local.get $index) (i32.const 2)))) (i32.add (local.get $row) (i32.const 3))))
                      (then (local.set $step (i32.const 4))))))))))
        (if (i32.eq (local.get $step) (i32.const 4))
          (then
            (local.set $scores
              (f32x4.mul
                (f32x4.convert_i32x4_s
                  (call $dot_block
                    (i32.add (local.get $codes) (i32.mul (i32.shr_u (local.get $row) (i32.const 2)) (local.get $block_bytes)))
                    (local.get $query) (local.get $query_end)))
                (v128.load (i32.add (local.get $scales) (i32.shl (local.get $row) (i32.const 2))))))
            ;; Most blocks hold no row good enough: one vector compare rejects all four.
            (if (v128.any_true (f32x4.ge (local.get $scores) (f32x4.splat (local.get $worst))))
              (then
                (local.set $worst (call $offer_lane (local.get $row) (f32x4.extract_lane 0 (local.get $scores)) (local.get $worst) (local.get $index) (local.get $count)))
                (local.set $worst (call $offer_lane (i32.add (local.get $row) (i32.const 1)) (f32x4.extract_lane 1 (local.get $scores)) (local.get $worst) (i32.add (local.get $index) (i32.const 1)) (local.get $count)))
                (local.set $worst (call $offer_lane (i32.add (local.get $row) (i32.const 2)) (f32x4.extract_lane 2 (local.get $scores)) (local.get $worst) (i32.add (local.get $index) (i32.const 2)) (local.get $count)))
                (local.set $worst (call $offer_lane (i32.add (local.get $row) (i32.const 3)) (f32x4.extract_lane 3 (local.get $scores)) (local.get $worst) (i32.add (local.get $index) (i32.const 3)) (local.get $count))))))
          (else
            (local.set $score
              (f32.mul
                (f32.convert_i32_s
                  (call $dot_row
                    (i32.add
                      (i32.add (local.get $codes) (i32.mul (i32.shr_u (local.get $row) (i32.const 2)) (local.get $block_bytes)))
                      (i32.shl (i32.and (local.get $row) (i32.const 3)) (i32.const 3)))
                    (local.get $query) (local.get $query_end)))
                (f32.load (i32.add (local.get $scales) (i32.shl (local.get $row) (i32.const 2))))))
            (if (f32.ge (local.get $score) (local.get $worst))
              (then (local.set $worst (call $offer (local.get $row) (local.get $score)))))))
        (local.set $index (i32.add (local.get $index) (local.get $step)))
        (br $next)))
    (global.get $heap_size))

  ;; Offer one lane of a scored block, unless its position is past the end of the scan.
  (func $offer_lane (param $row i32) (param $score f32) (param $worst f32) (param $position i32) (param $count i32) (result f32)
    (if (result f32) (i32.and (f32.ge (local.get $score) (local.get $worst)) (i32.lt_u (local.get $position) (local.get $count)))
      (then (call $offer (local.get $row) (local.get $score)))
      (else (local.get $worst))))

  ;; The integer dot products of the four rows of the block at `pointer` with the query, as [row 0 .. row 3].
  (func $dot_block (param $pointer i32) (param $query_pointer i32) (param $query_end i32) (result v128)
    (local $low v128) (local $high v128)
    (local $sum0 v128) (local $sum1 v128) (local $sum2 v128) (local $sum3 v128)
    ;; 16 codes of each row a step: 8 from the block's first 32 bytes, 8 from the next 32.
    (loop $step
      (local.set $low (v128.load (local.get $query_pointer)))
      (local.set $high (v128.load offset=16 (local.get $query_pointer)))
      (local.set $sum0 (i32x4.add (local.get $sum0) (i32x4.dot_i16x8_s (v128.load8x8_s (local.get $pointer)) (local.get $low))))
      (local.set $sum1 (i32x4.add (local.get $sum1) (i32x4.dot_i16x8_s (v128.load8x8_s offset=8 (local.get $pointer)) (local.get $low))))
      (local.set $sum2 (i32x4.add (local.get $sum2) (i32x4.dot_i16x8_s (v128.load8x8_s offset=16 (local.get $pointer)) (local.get $low))))
      (local.set $sum3 (i32x4.add (local.get $sum3) (i32x4.dot_i16x8_s (v128.load8x8_s offset=24 (local.get $pointer)) (local.get $low))))
      (local.set $sum0 (i32x4.add (local.get $sum0) (i32x4.dot_i16x8_s (v128.load8x8_s offset=32 (local.get $pointer)) (local.get $high))))
      (local.set $sum1 (i32x4.add (local.get $sum1) (i32x4.dot_i16x8_s (v128.load8x8_s offset=40 (local.get $pointer)) (local.get $high))))
      (local.set $sum2 (i32x4.add (local.get $sum2) (i32x4.dot_i16x8_s (v128.load8x8_s offset=48 (local.get $pointer)) (local.get $high))))
      (local.set $sum3 (i32x4.add (local.get $sum3) (i32x4.dot_i16x8_s (v128.load8x8_s offset=56 (local.get $pointer)) (local.get $high))))
      (local.set $pointer (i32.add (local.get $pointer) (i32.const 64)))
      (local.set $query_pointer (i32.add (local.get $query_pointer) (i32.const 32)))
      (br_if $step (i32.lt_u (local.get $query_pointer) (local.get $query_end))))
    ;; Transpose-and-add: [s0a+s0b, s1a+s1b, s0c+s0d, s1c+s1d], the same for rows 2 and 3, then both halves.
    (local.set $low (i32x4.add
      (i8x16.shuffle 0 1 2 3 16 17 18 19 8 9 10 11 24 25 26 27 (local.get $sum0) (local.get $sum1))
      (i8x16.shuffle 4 5 6 7 20 21 22 23 12 13 14 15 28 29 30 31 (local.get $sum0) (local.get $sum1))))
    (local.set $high (i32x4.add
      (i8x16.shuffle 0 1 2 3 16 17 18 19 8 9 10 11 24 25 26 27 (local.get $sum2) (local.get $sum3))
      (i8x16.shuffle 4 5 6 7 20 21 22 23 12 13 14 15 28 29 30 31 (local.get $sum2) (local.get $sum3))))
    (i32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $low) (local.get $high))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $low) (local.get $high))))

  ;; The integer dot product of one row with the query; `pointer` is the row's first 8 codes in its block.
  (func $dot_row (param $pointer i32) (param $query_pointer i32) (param $query_end i32) (result i32)
    (local $sum0 v128) (local $sum1 v128)
    (loop $step
      (local.set $sum0 (i32x4.add (local.get $sum0)
        (i32x4.dot_i16x8_s (v128.load8x8_s (local.get $pointer)) (v128.load (local.get $query_pointer)))))
      (local.set $sum1 (i32x4.add (local.get $sum1)
        (i32x4.dot_i16x8_s (v128.load8x8_s offset=32 (local.get $pointer)) (v128.load offset=16 (local.get $query_pointer)))))
      (local.set $pointer (i32.add (local.get $pointer) (i32.const 64)))
      (local.set $query_pointer (i32.add (local.get $query_pointer) (i32.const 32)))
      (br_if $step (i32.lt_u (local.get $query_pointer) (local.get $query_end))))
    (local.set $sum0 (i32x4.add (local.get $sum0) (local.get $sum1)))
    (local.set $sum0 (i32x4.add (local.get $sum0)
      (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $sum0) (local.get $sum0))))
    (i32.add (i32x4.extract_lane 0 (local.get $sum0)) (i32x4.extract_lane 1 (local.get $sum0))))

  ;; --- HNSW graph kernels, driven by stores/indexes/hnsw-index.ts ---
  ;;
  ;; Rows are `stride` bytes apart, stride a multiple of 16 (4 floats), the padding zero-filled. A query is
  ;; any 16-byte-aligned row of the same stride: the query region, or a stored row (a node being linked is
  ;; scored against its neighbours). Scores are float32, and all come from $dot_pair, so a row's score
  ;; against a query is the same whichever call computed it, and whichever of the two is the query.

  ;; The dot products of the query with the rows at `first` and `second`, as [first, second, first, first].
  ;; Rows are scored two at a time because graph search reads rows scattered through memory: two rows in
  ;; flight hide more memory latency, and each part of the query is loaded once for both. This loop (two
  ;; sums per row, 32 bytes a step) measured about 25% faster a row than a one-row loop with four sums over
  ;; rows evicted from the caches, and 5-10% faster over cached ones. A 64-byte step with four sums a row
  ;; measured slower than one row at a time over cached rows: V8 ran out of vector registers and kept a sum
  ;; on the stack.
  (func $dot_pair (param $query i32) (param $first i32) (param $second i32) (param $stride i32) (result v128)
    (local $end i32) (local $wide_end i32) (local $weights v128)
    (local $first0 v128) (local $first1 v128) (local $second0 v128) (local $second1 v128)
    (local.set $end (i32.add (local.get $query) (local.get $stride)))
    (local.set $wide_end (i32.add (local.get $query) (i32.and (local.get $stride) (i32.const -32))))
    (block $wide_done
      (br_if $wide_done (i32.ge_u (local.get $query) (local.get $wide_end)))
      (loop $step
        (local.set $weights (v128.load (local.get $query)))
        (local.set $first0 (f32x4.add (local.get $first0) (f32x4.mul (v128.load (local.get $first)) (local.get $weights))))
        (local.set $second0 (f32x4.add (local.get $second0) (f32x4.mul (v128.load (local.get $second)) (local.get $weights))))
        (local.set $weights (v128.load offset=16 (local.get $query)))
        (local.set $first1 (f32x4.add (local.get $first1) (f32x4.mul (v128.load offset=16 (local.get $first)) (local.get $weights))))
        (local.set $second1 (f32x4.add (local.get $second1) (f32x4.mul (v128.load offset=16 (local.get $second)) (local.get $weights))))
        (local.set $query (i32.add (local.get $query) (i32.const 32)))
        (local.set $first (i32.add (local.get $first) (i32.const 32)))
        (local.set $second (i32.add (local.get $second) (i32.const 32)))
        (br_if $step (i32.lt_u (local.get $query) (local.get $wide_end)))))
    ;; A stride of 16 (mod 32), as a SimdVectorSpace's rows may have: the last 4 floats go to the first sums.
    (if (i32.lt_u (local.get $query) (local.get $end))
      (then
        (local.set $weights (v128.load (local.get $query)))
        (local.set $first0 (f32x4.add (local.get $first0) (f32x4.mul (v128.load (local.get $first)) (local.get $weights))))
        (local.set $second0 (f32x4.add (local.get $second0) (f32x4.mul (v128.load (local.get $second)) (local.get $weights))))))
    (local.set $first0 (f32x4.add (local.get $first0) (local.get $first1)))
    (local.set $second0 (f32x4.add (local.get $second0) (local.get $second1)))
    ;; [f0 + f2, f1 + f3, s0 + s2, s1 + s3], then lanes 0 + 1 and 2 + 3: both rows reduce alike.
    (local.set $first0 (f32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $first0) (local.get $second0))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $first0) (local.get $second0))))
    (f32x4.add
      (i8x16.shuffle 0 1 2 3 8 9 10 11 0 1 2 3 0 1 2 3 (local.get $first0) (local.get $first0))
      (i8x16.shuffle 4 5 6 7 12 13 14 15 4 5 6 7 4 5 6 7 (local.get $first0) (local.get $first0))))

  ;; The dot products of the query with four rows, as [first, second, third, fourth]: each row's sums run
  ;; exactly as in $dot_pair (so its score is the same bit for bit), four rows in flight at once.
  (func $dot_quad (param $query i32) (param $first i32) (param $second i32) (param $third i32) (param $fourth i32) (param $stride i32) (result v128)
    (local $end i32) (local $wide_end i32) (local $low v128) (local $high v128)
    (local $first0 v128) (local $first1 v128) (local $second0 v128) (local $second1 v128)
    (local $third0 v128) (local $third1 v128) (local $fourth0 v128) (local $fourth1 v128)
    (local.set $end (i32.add (local.get $query) (local.get $stride)))
    (local.set $wide_end (i32.add (local.get $query) (i32.and (local.get $stride) (i32.const -32))))
    (block $wide_done
      (br_if $wide_done (i32.ge_u (local.get $query) (local.get $wide_end)))
      (loop $step
        (local.set $low (v128.load (local.get $query)))
        (local.set $high (v128.load offset=16 (local.get $query)))
        (local.set $first0 (f32x4.add (local.get $first0) (f32x4.mul (v128.load (local.get $first)) (local.get $low))))
        (local.set $first1 (f32x4.add (local.get $first1) (f32x4.mul (v128.load offset=16 (local.get $first)) (local.get $high))))
        (local.set $second0 (f32x4.add (local.get $second0) (f32x4.mul (v128.load (local.get $second)) (local.get $low))))
        (local.set $second1 (f32x4.add (local.get $second1) (f32x4.mul (v128.load offset=16 (local.get $second)) (local.get $high))))
        (local.set $third0 (f32x4.add (local.get $third0) (f32x4.mul (v128.load (local.get $third)) (local.get $low))))
        (local.set $third1 (f32x4.add (local.get $third1) (f32x4.mul (v128.load offset=16 (local.get $third)) (local.get $high))))
        (local.set $fourth0 (f32x4.add (local.get $fourth0) (f32x4.mul (v128.load (local.get $fourth)) (local.get $low))))
        (local.set $fourth1 (f32x4.add (local.get $fourth1) (f32x4.mul (v128.load offset=16 (local.get $fourth)) (local.get $high))))
        (local.set $query (i32.add (local.get $query) (i32.const 32)))
        (local.set $first (i32.add (local.get $first) (i32.const 32)))
        (local.set $second (i32.add (local.get $second) (i32.const 32)))
        (local.set $third (i32.add (local.get $third) (i32.const 32)))
        (local.set $fourth (i32.add (local.get $fourth) (i32.const 32)))
        (br_if $step (i32.lt_u (local.get $query) (local.get $wide_end)))))
    (if (i32.lt_u (local.get $query) (local.get $end))
      (then
        (local.set $low (v128.load (local.get $query)))
        (local.set $first0 (f32x4.add (local.get $first0) (f32x4.mul (v128.load (local.get $first)) (local.get $low))))
        (local.set $second0 (f32x4.add (local.get $second0) (f32x4.mul (v128.load (local.get $second)) (local.get $low))))
        (local.set $third0 (f32x4.add (local.get $third0) (f32x4.mul (v128.load (local.get $third)) (local.get $low))))
        (local.set $fourth0 (f32x4.add (local.get $fourth0) (f32x4.mul (v128.load (local.get $fourth)) (local.get $low))))))
    (local.set $first0 (f32x4.add (local.get $first0) (local.get $first1)))
    (local.set $second0 (f32x4.add (local.get $second0) (local.get $second1)))
    (local.set $third0 (f32x4.add (local.get $third0) (local.get $third1)))
    (local.set $fourth0 (f32x4.add (local.get $fourth0) (local.get $fourth1)))
    ;; As $dot_pair: [f0 + f2, f1 + f3, s0 + s2, s1 + s3] (and the same for the third and fourth rows), then
    ;; lanes 0 + 1 and 2 + 3 of each.
    (local.set $low (f32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $first0) (local.get $second0))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $first0) (local.get $second0))))
    (local.set $high (f32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $third0) (local.get $fourth0))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $third0) (local.get $fourth0))))
    (f32x4.add
      (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $low) (local.get $high))
      (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $low) (local.get $high))))

  ;; Byte address of the row listed at `rows`[index].
  (func $listed_row (param $vectors i32) (param $stride i32) (param $rows i32) (param $index i32) (result i32)
    (i32.add (local.get $vectors)
      (i32.mul (i32.load (i32.add (local.get $rows) (i32.shl (local.get $index) (i32.const 2)))) (local.get $stride))))

  ;; Scores of the `count` rows listed (i32) at `rows` against the query, written to out[index] (f32): two
  ;; rows a pass, a last odd one paired with itself.
  (func $dot_rows (export "dot_rows")
    (param $vectors i32) (param $stride i32) (param $query i32) (param $rows i32) (param $count i32) (param $out i32)
    (local $index i32) (local $second i32) (local $pair v128)
    (block $scored
      (loop $next
        (br_if $scored (i32.ge_u (local.get $index) (local.get $count)))
        (local.set $second
          (select (i32.add (local.get $index) (i32.const 1)) (local.get $index)
            (i32.lt_u (i32.add (local.get $index) (i32.const 1)) (local.get $count))))
        (local.set $pair
          (call $dot_pair
            (local.get $query)
            (call $listed_row (local.get $vectors) (local.get $stride) (local.get $rows) (local.get $index))
            (call $listed_row (local.get $vectors) (local.get $stride) (local.get $rows) (local.get $second))
            (local.get $stride)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $index) (i32.const 2))) (f32x4.extract_lane 0 (local.get $pair)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $second) (i32.const 2))) (f32x4.extract_lane 1 (local.get $pair)))
        (local.set $index (i32.add (local.get $index) (i32.const 2)))
        (br $next))))

  ;; --- The HNSW graph walk: a whole search, or the linking of a new node, in one call ---
  ;;
  ;; hnsw_configure says where the graph lives; the regions are stores/indexes/hnsw-index.ts's:
  ;;   - nodes: per node 8 bytes, so that the one cache line a walk reads for a neighbour holds all of:
  ;;       the row of its vector (bits 0-29; the vector is at vectors + row * stride) and its flag
  ;;       (bits 30-31: 0 live; 1 walked through but never returned, a vector not stored for good yet;
  ;;       2 unlinked, a free slot: never scored, never entered), then its visit mark (`epoch`);
  ;;   - layer 0: per node, a count and 2m neighbours (i32); upper layers: per node of level L > 0,
  ;;     upper_index[node] is the slot in the upper pool where its L lists of a count and m neighbours begin;
  ;;   - frontier and nearest: the two heaps of a layer search, 8 bytes an entry (node i32, score f32),
  ;;     each with room for every node; buffer, pool and kept: scratch lists of 2m + 1 entries.
  ;; The walk is the one the TypeScript walk it replaced ran, step for step: the same scores (all from
  ;; $dot_pair), the same order of offers, and the same tie rules (ScoredHeap's), so it returns the same
  ;; nodes. Node 20 does not inline WebAssembly calls, so the steps run for every neighbour are written out
  ;; where they are used.
  (global $graph_vectors (mut i32) (i32.const 0))
  (global $graph_stride (mut i32) (i32.const 0))
  (global $graph_dimensions (mut i32) (i32.const 0))
  (global $graph_nodes (mut i32) (i32.const 0))
  (global $graph_capacity (mut i32) (i32.const 0))
  (global $graph_layer0 (mut i32) (i32.const 0))
  (global $graph_layer0_bytes (mut i32) (i32.const 0))
  (global $graph_m (mut i32) (i32.const 0))
  (global $graph_upper_index (mut i32) (i32.const 0))
  (global $graph_upper_pool (mut i32) (i32.const 0))
  (global $graph_upper_slots (mut i32) (i32.const 0))
  (global $graph_frontier (mut i32) (i32.const 0))
  (global $graph_nearest (mut i32) (i32.const 0))
  (global $graph_buffer (mut i32) (i32.const 0))
  (global $graph_pool (mut i32) (i32.const 0))
  (global $graph_kept (mut i32) (i32.const 0))
  (global $epoch (mut i32) (i32.const 0))
  (global $frontier_size (mut i32) (i32.const 0))
  (global $nearest_size (mut i32) (i32.const 0))

  (func (export "hnsw_configure")
    (param $vectors i32) (param $stride i32) (param $dimensions i32) (param $nodes i32) (param $capacity i32)
    (param $layer0 i32) (param $m i32) (param $upper_index i32) (param $upper_pool i32) (param $frontier i32)
    (param $nearest i32) (param $buffer i32) (param $pool i32) (param $kept i32)
    (global.set $graph_vectors (local.get $vectors))
    (global.set $graph_stride (local.get $stride))
    (global.set $graph_dimensions (local.get $dimensions))
    (global.set $graph_nodes (local.get $nodes))
    (global.set $graph_capacity (local.get $capacity))
    (global.set $graph_layer0 (local.get $layer0))
    (global.set $graph_layer0_bytes (i32.shl (i32.add (i32.shl (local.get $m) (i32.const 1)) (i32.const 1)) (i32.const 2)))
    (global.set $graph_m (local.get $m))
    (global.set $graph_upper_index (local.get $upper_index))
    (global.set $graph_upper_pool (local.get $upper_pool))
    (global.set $graph_upper_slots (i32.add (local.get $m) (i32.const 1)))
    (global.set $graph_frontier (local.get $frontier))
    (global.set $graph_nearest (local.get $nearest))
    (global.set $graph_buffer (local.get $buffer))
    (global.set $graph_pool (local.get $pool))
    (global.set $graph_kept (local.get $kept))
    ;; The epochs start again, so no mark may hold one.
    (call $clear_marks)
    (global.set $epoch (i32.const 0)))

  (func $clear_marks
    (local $mark i32) (local $end i32)
    (local.set $mark (i32.add (global.get $graph_nodes) (i32.const 4)))
    (local.set $end (i32.add (local.get $mark) (i32.shl (global.get $graph_capacity) (i32.const 3))))
    (block $cleared
      (loop $next
        (br_if $cleared (i32.ge_u (local.get $mark) (local.get $end)))
        (i32.store (local.get $mark) (i32.const 0))
        (local.set $mark (i32.add (local.get $mark) (i32.const 8)))
        (br $next))))

  ;; Byte address of the vector of `node`.
  (func $node_address (param $node i32) (result i32)
    (i32.add (global.get $graph_vectors)
      (i32.mul
        (i32.and (i32.load (i32.add (global.get $graph_nodes) (i32.shl (local.get $node) (i32.const 3)))) (i32.const 0x3fffffff))
        (global.get $graph_stride))))

  (func $flag (param $node i32) (result i32)
    (i32.shr_u (i32.load (i32.add (global.get $graph_nodes) (i32.shl (local.get $node) (i32.const 3)))) (i32.const 30)))

  ;; Byte address of the count of the neighbour list of `node` on `level` (followed by the neighbours).
  (func $list_of (param $node i32) (param $level i32) (result i32)
    (if (result i32) (i32.eqz (local.get $level))
      (then (i32.add (global.get $graph_layer0) (i32.mul (local.get $node) (global.get $graph_layer0_bytes))))
      (else
        (i32.add (global.get $graph_upper_pool)
          (i32.shl
            (i32.add
              (i32.load (i32.add (global.get $graph_upper_index) (i32.shl (local.get $node) (i32.const 2))))
              (i32.mul (i32.sub (local.get $level) (i32.const 1)) (global.get $graph_upper_slots)))
            (i32.const 2))))))

  (func $next_epoch (result i32)
    (if (i32.eq (global.get $epoch) (i32.const 0x7fffffff))
      (then
        (call $clear_marks)
        (global.set $epoch (i32.const 0))))
    (global.set $epoch (i32.add (global.get $epoch) (i32.const 1)))
    (global.get $epoch))

  ;; The heaps of a layer search (ScoredHeap's rules): the frontier keeps the best entry on top (a higher
  ;; score, or the same and a lower node), the nearest set the worst (a lower score, or the same and a
  ;; higher node).
  (func $frontier_push (param $node i32) (param $score f32)
    (local $position i32) (local $parent i32) (local $entry i32) (local $base i32) (local $other f32)
    (local.set $base (global.get $graph_frontier))
    (local.set $position (global.get $frontier_size))
    (global.set $frontier_size (i32.add (local.get $position) (i32.const 1)))
    (block $placed
      (loop $up
        (br_if $placed (i32.eqz (local.get $position)))
        (local.set $parent (i32.shr_u (i32.sub (local.get $position) (i32.const 1)) (i32.const 1)))
        (local.set $entry (i32.add (local.get $base) (i32.shl (local.get $parent) (i32.const 3))))
        (local.set $other (f32.load offset=4 (local.get $entry)))
        ;; Stop unless the new entry is above its parent.
        (br_if $placed
          (i32.eqz
            (i32.or (f32.gt (local.get $score) (local.get $other))
              (i32.and (f32.eq (local.get $score) (local.get $other)) (i32.lt_s (local.get $node) (i32.load (local.get $entry)))))))
        (i64.store (i32.add (local.get $base) (i32.shl (local.get $position) (i32.const 3))) (i64.load (local.get $entry)))
        (local.set $position (local.get $parent))
        (br $up)))
    (local.set $entry (i32.add (local.get $base) (i32.shl (local.get $position) (i32.const 3))))
    (i32.store (local.get $entry) (local.get $node))
    (f32.store offset=4 (local.get $entry) (local.get $score)))

  ;; Remove the best entry of the frontier and return its node.
  (func $frontier_pop (result i32)
    (local $top i32) (local $size i32) (local $base i32) (local $node i32) (local $score f32)
    (local $position i32) (local $child i32) (local $entry i32) (local $left f32) (local $right f32)
    (local.set $base (global.get $graph_frontier))
    (local.set $top (i32.load (local.get $base)))
    (local.set $size (i32.sub (global.get $frontier_size) (i32.const 1)))
    (global.set $frontier_size (local.get $size))
    (if (i32.eqz (local.get $size)) (then (return (local.get $top))))
    ;; The last entry sifts down from the top.
    (local.set $entry (i32.add (local.get $base) (i32.shl (local.get $size) (i32.const 3))))
    (local.set $node (i32.load (local.get $entry)))
    (local.set $score (f32.load offset=4 (local.get $entry)))
    (block $placed
      (loop $down
        (local.set $child (i32.add (i32.shl (local.get $position) (i32.const 1)) (i32.const 1)))
        (br_if $placed (i32.ge_u (local.get $child) (local.get $size)))
        (local.set $entry (i32.add (local.get $base) (i32.shl (local.get $child) (i32.const 3))))
        (if (i32.lt_u (i32.add (local.get $child) (i32.const 1)) (local.get $size))
          (then
            (local.set $left (f32.load offset=4 (local.get $entry)))
            (local.set $right (f32.load offset=12 (local.get $entry)))
            (if (i32.or (f32.gt (local.get $right) (local.get $left))
                  (i32.and (f32.eq (local.get $right) (local.get $left)) (i32.lt_s (i32.load offset=8 (local.get $entry)) (i32.load (local.get $entry)))))
              (then
                (local.set $child (i32.add (local.get $child) (i32.const 1)))
                (local.set $entry (i32.add (local.get $entry) (i32.const 8)))))))
        (local.set $left (f32.load offset=4 (local.get $entry)))
        (br_if $placed
          (i32.eqz
            (i32.or (f32.gt (local.get $left) (local.get $score))
              (i32.and (f32.eq (local.get $left) (local.get $score)) (i32.lt_s (i32.load (local.get $entry)) (local.get $node))))))
        (i64.store (i32.add (local.get $base) (i32.shl (local.get $position) (i32.const 3))) (i64.load (local.get $entry)))
        (local.set $position (local.get $child))
        (br $down)))
    (local.set $entry (i32.add (local.get $base) (i32.shl (local.get $position) (i32.const 3))))
    (i32.store (local.get $entry) (local.get $node))
    (f32.store offset=4 (local.get $entry) (local.get $score))
    (local.get $top))

  ;; Add an entry to the nearest set, which has room.
  (func $nearest_push (param $node i32) (param $score f32)
    (local $position i32) (local $parent i32) (local $entry i32) (local $base i32) (local $other f32)
    (local.set $base (global.get $graph_nearest))
    (local.set $position (global.get $nearest_size))
    (global.set $nearest_size (i32.add (local.get $position) (i32.const 1)))
    (block $placed
      (loop $up
        (br_if $placed (i32.eqz (local.get $position)))
        (local.set $parent (i32.shr_u (i32.sub (local.get $position) (i32.const 1)) (i32.const 1)))
        (local.set $entry (i32.add (local.get $base) (i32.shl (local.get $parent) (i32.const 3))))
        (local.set $other (f32.load offset=4 (local.get $entry)))
        (br_if $placed
          (i32.eqz
            (i32.or (f32.lt (local.get $score) (local.get $other))
              (i32.and (f32.eq (local.get $score) (local.get $other)) (i32.gt_s (local.get $node) (i32.load (local.get $entry)))))))
        (i64.store (i32.add (local.get $base) (i32.shl (local.get $position) (i32.const 3))) (i64.load (local.get $entry)))
        (local.set $position (local.get $parent))
        (br $up)))
    (local.set $entry (i32.add (local.get $base) (i32.shl (local.get $position) (i32.const 3))))
    (i32.store (local.get $entry) (local.get $node))
    (f32.store offset=4 (local.get $entry) (local.get $score)))

  ;; Put an entry in place of the worst of the `size` entries of the nearest set, sifting it down.
  (func $nearest_replace (param $size i32) (param $node i32) (param $score f32)
    (local $position i32) (local $child i32) (local $entry i32) (local $base i32) (local $left f32) (local $right f32)
    (local.set $base (global.get $graph_nearest))
    (block $placed
      (loop $down
        (local.set $child (i32.add (i32.shl (local.get $position) (i32.const 1)) (i32.const 1)))
        (br_if $placed (i32.ge_u (local.get $child) (local.get $size)))
        (local.set $entry (i32.add (local.get $base) (i32.shl (local.get $child) (i32.const 3))))
        (if (i32.lt_u (i32.add (local.get $child) (i32.const 1)) (local.get $size))
          (then
            (local.set $left (f32.load offset=4 (local.get $entry)))
            (local.set $right (f32.load offset=12 (local.get $entry)))
            (if (i32.or (f32.lt (local.get $right) (local.get $left))
                  (i32.and (f32.eq (local.get $right) (local.get $left)) (i32.gt_s (i32.load offset=8 (local.get $entry)) (i32.load (local.get $entry)))))
              (then
                (local.set $child (i32.add (local.get $child) (i32.const 1)))
                (local.set $entry (i32.add (local.get $entry) (i32.const 8)))))))
        (local.set $left (f32.load offset=4 (local.get $entry)))
        (br_if $placed
          (i32.eqz
            (i32.or (f32.lt (local.get $left) (local.get $score))
              (i32.and (f32.eq (local.get $left) (local.get $score)) (i32.gt_s (i32.load (local.get $entry)) (local.get $node))))))
        (i64.store (i32.add (local.get $base) (i32.shl (local.get $position) (i32.const 3))) (i64.load (local.get $entry)))
        (local.set $position (local.get $child))
        (br $down)))
    (local.set $entry (i32.add (local.get $base) (i32.shl (local.get $position) (i32.const 3))))
    (i32.store (local.get $entry) (local.get $node))
    (f32.store offset=4 (local.get $entry) (local.get $score)))

  ;; A scored neighbour that beats the worst of the nearest set (or the set has room): expand it later, and
  ;; keep it among the nearest unless `live_only` and it is flagged.
  (func $accept (param $node i32) (param $score f32) (param $ef i32) (param $live_only i32)
    (call $frontier_push (local.get $node) (local.get $score))
    (if (i32.or (i32.eqz (local.get $live_only)) (i32.eqz (call $flag (local.get $node))))
      (then
        (if (i32.lt_u (global.get $nearest_size) (local.get $ef))
          (then (call $nearest_push (local.get $node) (local.get $score)))
          (else (call $nearest_replace (global.get $nearest_size) (local.get $node) (local.get $score)))))))

  ;; Best-first search of one layer from `start` for the vector at `query`, keeping the `ef` most similar
  ;; nodes in the nearest heap (with `live_only`, nodes flagged 1 are walked through but not kept). Returns
  ;; how many it kept.
  (func $search_layer (param $query i32) (param $start i32) (param $ef i32) (param $level i32) (param $live_only i32) (result i32)
    (local $epoch i32) (local $nodes i32) (local $buffer i32) (local $list i32) (local $end i32) (local $count i32)
    (local $index i32) (local $neighbour i32) (local $header i32) (local $written i32) (local $pair v128)
    (local $vectors i32) (local $stride i32) (local $first i32) (local $second i32) (local $third i32) (local $fourth i32)
    (local $last i32) (local $score f32)
    (local.set $epoch (call $next_epoch))
    (local.set $nodes (global.get $graph_nodes))
    (local.set $buffer (global.get $graph_buffer))
    (local.set $vectors (global.get $graph_vectors))
    (local.set $stride (global.get $graph_stride))
    (global.set $frontier_size (i32.const 0))
    (global.set $nearest_size (i32.const 0))
    (i32.store offset=4 (i32.add (local.get $nodes) (i32.shl (local.get $start) (i32.const 3))) (local.get $epoch))
    (local.set $first (call $node_address (local.get $start)))
    (local.set $score (f32x4.extract_lane 0 (call $dot_pair (local.get $query) (local.get $first) (local.get $first) (local.get $stride))))
    (call $frontier_push (local.get $start) (local.get $score))
    (if (i32.or (i32.eqz (local.get $live_only)) (i32.eqz (call $flag (local.get $start))))
      (then (call $nearest_push (local.get $start) (local.get $score))))
    (block $done
      (loop $expand
        (br_if $done (i32.eqz (global.get $frontier_size)))
        (br_if $done
          (i32.and
            (i32.ge_u (global.get $nearest_size) (local.get $ef))
            (f32.lt (f32.load offset=4 (global.get $graph_frontier)) (f32.load offset=4 (global.get $graph_nearest)))))
        (local.set $list (call $list_of (call $frontier_pop) (local.get $level)))
        (local.set $end (i32.add (i32.add (local.get $list) (i32.const 4)) (i32.shl (i32.load (local.get $list)) (i32.const 2))))
        ;; The unvisited neighbours, marked now, in list order, as the byte addresses of their vectors and
        ;; their nodes; unlinked slots are marked but not scored.
        (local.set $written (i32.const 0))
        (local.set $list (i32.add (local.get $list) (i32.const 4)))
        (block $listed
          (loop $next
            (br_if $listed (i32.ge_u (local.get $list) (local.get $end)))
            (local.set $neighbour (i32.load (local.get $list)))
            (local.set $header (i32.add (local.get $nodes) (i32.shl (local.get $neighbour) (i32.const 3))))
            (if (i32.ne (i32.load offset=4 (local.get $header)) (local.get $epoch))
              (then
                (i32.store offset=4 (local.get $header) (local.get $epoch))
                (local.set $index (i32.load (local.get $header)))
                (if (i32.ne (i32.shr_u (local.get $index) (i32.const 30)) (i32.const 2))
                  (then
                    (i64.store (i32.add (local.get $buffer) (i32.shl (local.get $written) (i32.const 3)))
                      (i64.or
                        (i64.extend_i32_u (local.get $neighbour))
                        (i64.shl
                          (i64.extend_i32_u (i32.add (local.get $vectors) (i32.mul (i32.and (local.get $index) (i32.const 0x3fffffff)) (local.get $stride))))
                          (i64.const 32))))
                    (local.set $written (i32.add (local.get $written) (i32.const 1)))))))
            (local.set $list (i32.add (local.get $list) (i32.const 4)))
            (br $next)))
        ;; Scored four at a time (a short last group repeats its last row), offered one by one in list
        ;; order; most fall short of the worst kept at once.
        (local.set $index (i32.const 0))
        (local.set $last (i32.add (local.get $buffer) (i32.shl (i32.sub (local.get $written) (i32.const 1)) (i32.const 3))))
        (block $offered
          (loop $quads
            (br_if $offered (i32.ge_u (local.get $index) (local.get $written)))
            (local.set $first (i32.add (local.get $buffer) (i32.shl (local.get $index) (i32.const 3))))
            (local.set $second (select (i32.add (local.get $first) (i32.const 8)) (local.get $last) (i32.lt_u (i32.add (local.get $first) (i32.const 8)) (local.get $last))))
            (local.set $third (select (i32.add (local.get $first) (i32.const 16)) (local.get $last) (i32.lt_u (i32.add (local.get $first) (i32.const 16)) (local.get $last))))
            (local.set $fourth (select (i32.add (local.get $first) (i32.const 24)) (local.get $last) (i32.lt_u (i32.add (local.get $first) (i32.const 24)) (local.get $last))))
            (local.set $pair
              (call $dot_quad (local.get $query)
                (i32.load offset=4 (local.get $first)) (i32.load offset=4 (local.get $second))
                (i32.load offset=4 (local.get $third)) (i32.load offset=4 (local.get $fourth)) (local.get $stride)))
            (local.set $score (f32x4.extract_lane 0 (local.get $pair)))
            (if (i32.or (i32.lt_u (global.get $nearest_size) (local.get $ef)) (f32.gt (local.get $score) (f32.load offset=4 (global.get $graph_nearest))))
              (then (call $accept (i32.load (local.get $first)) (local.get $score) (local.get $ef) (local.get $live_only))))
            (if (i32.gt_u (local.get $second) (local.get $first))
              (then
                (local.set $score (f32x4.extract_lane 1 (local.get $pair)))
                (if (i32.or (i32.lt_u (global.get $nearest_size) (local.get $ef)) (f32.gt (local.get $score) (f32.load offset=4 (global.get $graph_nearest))))
                  (then (call $accept (i32.load (local.get $second)) (local.get $score) (local.get $ef) (local.get $live_only))))))
            (if (i32.gt_u (local.get $third) (local.get $second))
              (then
                (local.set $score (f32x4.extract_lane 2 (local.get $pair)))
                (if (i32.or (i32.lt_u (global.get $nearest_size) (local.get $ef)) (f32.gt (local.get $score) (f32.load offset=4 (global.get $graph_nearest))))
                  (then (call $accept (i32.load (local.get $third)) (local.get $score) (local.get $ef) (local.get $live_only))))))
            (if (i32.gt_u (local.get $fourth) (local.get $third))
              (then
                (local.set $score (f32x4.extract_lane 3 (local.get $pair)))
                (if (i32.or (i32.lt_u (global.get $nearest_size) (local.get $ef)) (f32.gt (local.get $score) (f32.load offset=4 (global.get $graph_nearest))))
                  (then (call $accept (i32.load (local.get $fourth)) (local.get $score) (local.get $ef) (local.get $live_only))))))
            (local.set $index (i32.add (local.get $index) (i32.const 4)))
            (br $quads)))
        (br $expand)))
    (global.get $nearest_size))

  ;; Sort the nearest heap of `size` entries in place, best first (higher score, then lower node).
  (func $sort_nearest (param $size i32)
    (local $end i32) (local $entry i32) (local $node i32) (local $score f32)
    (local.set $end (i32.sub (local.get $size) (i32.const 1)))
    (block $sorted
      (loop $next
        (br_if $sorted (i32.le_s (local.get $end) (i32.const 0)))
        (local.set $entry (i32.add (global.get $graph_nearest) (i32.shl (local.get $end) (i32.const 3))))
        (local.set $node (i32.load (local.get $entry)))
        (local.set $score (f32.load offset=4 (local.get $entry)))
        ;; The top is the worst left: it goes to the end, and the last entry sifts down from the top.
        (i64.store (local.get $entry) (i64.load (global.get $graph_nearest)))
        (call $nearest_replace (local.get $end) (local.get $node) (local.get $score))
        (local.set $end (i32.sub (local.get $end) (i32.const 1)))
        (br $next))))

  ;; Walk from `start` to the neighbour most similar to the vector at `query` on `level`, until none is better
  ;; (the descent through the upper layers). Unlinked slots are skipped.
  (func $greedy (param $query i32) (param $start i32) (param $level i32) (result i32)
    (local $best i32) (local $best_score f32) (local $list i32) (local $count i32) (local $index i32) (local $written i32)
    (local $improved i32) (local $second i32) (local $neighbour i32) (local $buffer i32) (local $pair v128)
    (local.set $buffer (global.get $graph_buffer))
    (local.set $best (local.get $start))
    (local.set $index (call $node_address (local.get $start)))
    (local.set $best_score (f32x4.extract_lane 0 (call $dot_pair (local.get $query) (local.get $index) (local.get $index) (global.get $graph_stride))))
    (loop $walk
      (local.set $improved (i32.const 0))
      (local.set $list (call $list_of (local.get $best) (local.get $level)))
      (local.set $count (i32.load (local.get $list)))
      (local.set $written (i32.const 0))
      (local.set $index (i32.const 0))
      (block $listed
        (loop $next
          (br_if $listed (i32.ge_u (local.get $index) (local.get $count)))
          (local.set $neighbour (i32.load offset=4 (i32.add (local.get $list) (i32.shl (local.get $index) (i32.const 2)))))
          (if (i32.ne (call $flag (local.get $neighbour)) (i32.const 2))
            (then
              (i32.store (i32.add (local.get $buffer) (i32.shl (local.get $written) (i32.const 2))) (local.get $neighbour))
              (local.set $written (i32.add (local.get $written) (i32.const 1)))))
          (local.set $index (i32.add (local.get $index) (i32.const 1)))
          (br $next)))
      (local.set $index (i32.const 0))
      (block $scored
        (loop $pairs
          (br_if $scored (i32.ge_u (local.get $index) (local.get $written)))
          (local.set $second
            (select (i32.add (local.get $index) (i32.const 1)) (local.get $index)
              (i32.lt_u (i32.add (local.get $index) (i32.const 1)) (local.get $written))))
          (local.set $pair
            (call $dot_pair
              (local.get $query)
              (call $node_address (i32.load (i32.add (local.get $buffer) (i32.shl (local.get $index) (i32.const 2)))))
              (call $node_address (i32.load (i32.add (local.get $buffer) (i32.shl (local.get $second) (i32.const 2)))))
              (global.get $graph_stride)))
          (if (f32.gt (f32x4.extract_lane 0 (local.get $pair)) (local.get $best_score))
            (then
              (local.set $best_score (f32x4.extract_lane 0 (local.get $pair)))
              (local.set $best (i32.load (i32.add (local.get $buffer) (i32.shl (local.get $index) (i32.const 2)))))
              (local.set $improved (i32.const 1))))
          (if (i32.and (i32.ne (local.get $second) (local.get $index)) (f32.gt (f32x4.extract_lane 1 (local.get $pair)) (local.get $best_score)))
            (then
              (local.set $best_score (f32x4.extract_lane 1 (local.get $pair)))
              (local.set $best (i32.load (i32.add (local.get $buffer) (i32.shl (local.get $second) (i32.const 2)))))
              (local.set $improved (i32.const 1))))
          (local.set $index (i32.add (local.get $index) (i32.const 2)))
          (br $pairs)))
      (br_if $walk (local.get $improved)))
    (local.get $best))

  ;; A whole search for the vector at `query`: the descent from `entry` through levels top_level..1, then a
  ;; layer-0 search keeping `ef` nodes (with `live_only`, none flagged 1), sorted best first in the nearest
  ;; region. The first `rescore` of them are then scored again exactly (float64, as score_f64), written to
  ;; `exact`, and re-sorted by those scores, ties to the lower row. Returns how many nodes were found.
  (func (export "hnsw_search")
    (param $query i32) (param $entry i32) (param $top_level i32) (param $ef i32) (param $live_only i32)
    (param $rescore i32) (param $exact i32) (result i32)
    (local $found i32)
    (block $descended
      (loop $descend
        (br_if $descended (i32.le_s (local.get $top_level) (i32.const 0)))
        (local.set $entry (call $greedy (local.get $query) (local.get $entry) (local.get $top_level)))
        (local.set $top_level (i32.sub (local.get $top_level) (i32.const 1)))
        (br $descend)))
    (local.set $found (call $search_layer (local.get $query) (local.get $entry) (local.get $ef) (i32.const 0) (local.get $live_only)))
    (call $sort_nearest (local.get $found))
    (call $rescore (local.get $query) (select (local.get $rescore) (local.get $found) (i32.lt_u (local.get $rescore) (local.get $found))) (local.get $exact))
    (local.get $found))

  ;; Score the first `count` nodes of the nearest region again exactly (float64, as score_f64), writing the
  ;; scores to `exact`, and sort those entries by them, ties to the lower row. The entries past `count`
  ;; are left as they are: after a search, in float32 order, so a larger `count` re-scores a larger prefix.
  (func (export "hnsw_rescore") (param $query i32) (param $count i32) (param $exact i32)
    (call $rescore (local.get $query) (local.get $count) (local.get $exact)))

  (func $rescore (param $query i32) (param $count i32) (param $exact i32)
    (local $index i32) (local $hole i32) (local $entry_bits i64) (local $score f64) (local $row i32)
    (local.set $index (i32.const 0))
    (block $scored
      (loop $next
        (br_if $scored (i32.ge_u (local.get $index) (local.get $count)))
        (f64.store (i32.add (local.get $exact) (i32.shl (local.get $index) (i32.const 3)))
          (call $exact_dot
            (call $node_address (i32.load (i32.add (global.get $graph_nearest) (i32.shl (local.get $index) (i32.const 3)))))
            (local.get $query) (global.get $graph_dimensions)))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br $next)))
    ;; Insertion sort: the float32 order is nearly the float64 one.
    (local.set $index (i32.const 1))
    (block $sorted
      (loop $next
        (br_if $sorted (i32.ge_u (local.get $index) (local.get $count)))
        (local.set $entry_bits (i64.load (i32.add (global.get $graph_nearest) (i32.shl (local.get $index) (i32.const 3)))))
        (local.set $score (f64.load (i32.add (local.get $exact) (i32.shl (local.get $index) (i32.const 3)))))
        (local.set $row (call $row_of (i32.wrap_i64 (local.get $entry_bits))))
        (local.set $hole (local.get $index))
        (block $placed
          (loop $shift
            (br_if $placed (i32.eqz (local.get $hole)))
            (br_if $placed
              (i32.eqz
                (call $exact_worse
                  (f64.load (i32.add (local.get $exact) (i32.shl (i32.sub (local.get $hole) (i32.const 1)) (i32.const 3))))
                  (call $row_of (i32.load (i32.add (global.get $graph_nearest) (i32.shl (i32.sub (local.get $hole) (i32.const 1)) (i32.const 3)))))
                  (local.get $score) (local.get $row))))
            (i64.store (i32.add (global.get $graph_nearest) (i32.shl (local.get $hole) (i32.const 3)))
              (i64.load (i32.add (global.get $graph_nearest) (i32.shl (i32.sub (local.get $hole) (i32.const 1)) (i32.const 3)))))
            (f64.store (i32.add (local.get $exact) (i32.shl (local.get $hole) (i32.const 3)))
              (f64.load (i32.add (local.get $exact) (i32.shl (i32.sub (local.get $hole) (i32.const 1)) (i32.const 3)))))
            (local.set $hole (i32.sub (local.get $hole) (i32.const 1)))
            (br $shift)))
        (i64.store (i32.add (global.get $graph_nearest) (i32.shl (local.get $hole) (i32.const 3))) (local.get $entry_bits))
        (f64.store (i32.add (local.get $exact) (i32.shl (local.get $hole) (i32.const 3))) (local.get $score))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br $next))))

  (func $row_of (param $node i32) (result i32)
    (i32.and (i32.load (i32.add (global.get $graph_nodes) (i32.shl (local.get $node) (i32.const 3)))) (i32.const 0x3fffffff)))

  ;; Whether (left_score, left_row) ranks below (right_score, right_row): a lower score, or the same and a higher row.
  (func $exact_worse (param $left_score f64) (param $left_row i32) (param $right_score f64) (param $right_row i32) (result i32)
    (i32.or
      (f64.lt (local.get $left_score) (local.get $right_score))
      (i32.and (f64.eq (local.get $left_score) (local.get $right_score)) (i32.gt_s (local.get $left_row) (local.get $right_row)))))

  ;; The neighbour-selection heuristic of HNSW (Malkov and Yashunin, algorithm 4) for node `base`: walk the
  ;; `count` candidates at `entries` (8 bytes each: node, then its f32 score against base), best first; skip
  ;; base itself; keep a candidate when its score beats its dot product with every node kept so far
  ;; (compared two kept nodes a pass); stop once `limit` are kept. Writes the kept nodes to `kept` (i32) and
  ;; returns how many.
  (func $select (export "hnsw_select") (param $base i32) (param $entries i32) (param $count i32) (param $limit i32) (param $kept i32) (result i32)
    (local $index i32) (local $node i32) (local $pointer i32) (local $score v128) (local $other i32) (local $size i32) (local $entry i32)
    (local $addresses i32) (local $last i32)
    ;; The vectors of the nodes kept so far, in the scratch buffer (free while this runs), compared four a pass.
    (local.set $addresses (global.get $graph_buffer))
    (block $selected
      (loop $next
        (br_if $selected (i32.ge_u (local.get $index) (local.get $count)))
        (br_if $selected (i32.ge_u (local.get $size) (local.get $limit)))
        (local.set $entry (i32.add (local.get $entries) (i32.shl (local.get $index) (i32.const 3))))
        (local.set $node (i32.load (local.get $entry)))
        (if (i32.ne (local.get $node) (local.get $base))
          (then
            (local.set $score (f32x4.splat (f32.load offset=4 (local.get $entry))))
            (local.set $pointer (call $node_address (local.get $node)))
            (local.set $other (i32.const 0))
            (local.set $last (i32.add (local.get $addresses) (i32.shl (i32.sub (local.get $size) (i32.const 1)) (i32.const 2))))
            (block $rejected
              (block $diverse
                (loop $compare
                  (br_if $diverse (i32.ge_u (local.get $other) (local.get $size)))
                  (local.set $entry (i32.add (local.get $addresses) (i32.shl (local.get $other) (i32.const 2))))
                  (br_if $rejected
                    (v128.any_true
                      (f32x4.gt
                        (call $dot_quad
                          (local.get $pointer)
                          (i32.load (local.get $entry))
                          (i32.load (select (i32.add (local.get $entry) (i32.const 4)) (local.get $last) (i32.lt_u (i32.add (local.get $entry) (i32.const 4)) (local.get $last))))
                          (i32.load (select (i32.add (local.get $entry) (i32.const 8)) (local.get $last) (i32.lt_u (i32.add (local.get $entry) (i32.const 8)) (local.get $last))))
                          (i32.load (select (i32.add (local.get $entry) (i32.const 12)) (local.get $last) (i32.lt_u (i32.add (local.get $entry) (i32.const 12)) (local.get $last))))
                          (global.get $graph_stride))
                        (local.get $score))))
                  (local.set $other (i32.add (local.get $other) (i32.const 4)))
                  (br $compare)))
              (i32.store (i32.add (local.get $kept) (i32.shl (local.get $size) (i32.const 2))) (local.get $node))
              (i32.store (i32.add (local.get $addresses) (i32.shl (local.get $size) (i32.const 2))) (local.get $pointer))
              (local.set $size (i32.add (local.get $size) (i32.const 1))))))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br $next)))
    (local.get $size))

  ;; Add `node` to the neighbours of `owner` on `level`; when the list is full, choose again among the new
  ;; node and the linked neighbours (sorted by their score against the owner, stably) with the heuristic.
  ;; Unlinked slots in the list are dropped then.
  (func $connect (param $owner i32) (param $node i32) (param $level i32)
    (local $list i32) (local $limit i32) (local $count i32) (local $pool i32) (local $size i32) (local $index i32)
    (local $neighbour i32) (local $query i32) (local $second i32) (local $third i32) (local $fourth i32) (local $last i32)
    (local $pair v128) (local $entry i32) (local $hole i32) (local $moved i64) (local $score f32) (local $kept i32) (local $chosen i32)
    (local.set $list (call $list_of (local.get $owner) (local.get $level)))
    (local.set $limit (select (global.get $graph_m) (i32.shl (global.get $graph_m) (i32.const 1)) (local.get $level)))
    (local.set $count (i32.load (local.get $list)))
    ;; A reused slot may still be listed by nodes that linked to the node it held.
    (block $absent
      (loop $look
        (br_if $absent (i32.ge_u (local.get $index) (local.get $count)))
        (if (i32.eq (i32.load offset=4 (i32.add (local.get $list) (i32.shl (local.get $index) (i32.const 2)))) (local.get $node))
          (then (return)))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br $look)))
    (local.set $index (i32.const 0))
    (if (i32.lt_u (local.get $count) (local.get $limit))
      (then
        (i32.store offset=4 (i32.add (local.get $list) (i32.shl (local.get $count) (i32.const 2))) (local.get $node))
        (i32.store (local.get $list) (i32.add (local.get $count) (i32.const 1)))
        (return)))
    ;; The pool: the new node, then the linked neighbours.
    (local.set $pool (global.get $graph_pool))
    (i32.store (local.get $pool) (local.get $node))
    (local.set $size (i32.const 1))
    (block $listed
      (loop $next
        (br_if $listed (i32.ge_u (local.get $index) (local.get $count)))
        (local.set $neighbour (i32.load offset=4 (i32.add (local.get $list) (i32.shl (local.get $index) (i32.const 2)))))
        (if (i32.ne (call $flag (local.get $neighbour)) (i32.const 2))
          (then
            (i32.store (i32.add (local.get $pool) (i32.shl (local.get $size) (i32.const 3))) (local.get $neighbour))
            (local.set $size (i32.add (local.get $size) (i32.const 1)))))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br $next)))
    (local.set $query (call $node_address (local.get $owner)))
    (local.set $index (i32.const 0))
    (local.set $last (i32.add (local.get $pool) (i32.shl (i32.sub (local.get $size) (i32.const 1)) (i32.const 3))))
    (block $scored
      (loop $quads
        (br_if $scored (i32.ge_u (local.get $index) (local.get $size)))
        (local.set $entry (i32.add (local.get $pool) (i32.shl (local.get $index) (i32.const 3))))
        (local.set $second (select (i32.add (local.get $entry) (i32.const 8)) (local.get $last) (i32.lt_u (i32.add (local.get $entry) (i32.const 8)) (local.get $last))))
        (local.set $third (select (i32.add (local.get $entry) (i32.const 16)) (local.get $last) (i32.lt_u (i32.add (local.get $entry) (i32.const 16)) (local.get $last))))
        (local.set $fourth (select (i32.add (local.get $entry) (i32.const 24)) (local.get $last) (i32.lt_u (i32.add (local.get $entry) (i32.const 24)) (local.get $last))))
        (local.set $pair
          (call $dot_quad
            (local.get $query)
            (call $node_address (i32.load (local.get $entry)))
            (call $node_address (i32.load (local.get $second)))
            (call $node_address (i32.load (local.get $third)))
            (call $node_address (i32.load (local.get $fourth)))
            (global.get $graph_stride)))
        ;; A repeated last entry is written more than once, with the same score.
        (f32.store offset=4 (local.get $entry) (f32x4.extract_lane 0 (local.get $pair)))
        (f32.store offset=4 (local.get $second) (f32x4.extract_lane 1 (local.get $pair)))
        (f32.store offset=4 (local.get $third) (f32x4.extract_lane 2 (local.get $pair)))
        (f32.store offset=4 (local.get $fourth) (f32x4.extract_lane 3 (local.get $pair)))
        (local.set $index (i32.add (local.get $index) (i32.const 4)))
        (br $quads)))
    ;; Insertion sort, best first and stable: at most 2m + 1 entries, most already in order.
    (local.set $index (i32.const 1))
    (block $sorted
      (loop $next
        (br_if $sorted (i32.ge_u (local.get $index) (local.get $size)))
        (local.set $entry (i32.add (local.get $pool) (i32.shl (local.get $index) (i32.const 3))))
        (local.set $moved (i64.load (local.get $entry)))
        (local.set $score (f32.load offset=4 (local.get $entry)))
        (local.set $hole (local.get $index))
        (block $placed
          (loop $shift
            (br_if $placed (i32.eqz (local.get $hole)))
            (br_if $placed
              (i32.eqz (f32.lt (f32.load offset=4 (i32.add (local.get $pool) (i32.shl (i32.sub (local.get $hole) (i32.const 1)) (i32.const 3)))) (local.get $score))))
            (i64.store (i32.add (local.get $pool) (i32.shl (local.get $hole) (i32.const 3)))
              (i64.load (i32.add (local.get $pool) (i32.shl (i32.sub (local.get $hole) (i32.const 1)) (i32.const 3)))))
            (local.set $hole (i32.sub (local.get $hole) (i32.const 1)))
            (br $shift)))
        (i64.store (i32.add (local.get $pool) (i32.shl (local.get $hole) (i32.const 3))) (local.get $moved))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br $next)))
    (local.set $kept (global.get $graph_kept))
    (local.set $chosen (call $select (local.get $owner) (local.get $pool) (local.get $size) (local.get $limit) (local.get $kept)))
    (i32.store (local.get $list) (local.get $chosen))
    (memory.copy (i32.add (local.get $list) (i32.const 4)) (local.get $kept) (i32.shl (local.get $chosen) (i32.const 2))))

  ;; Link `node` (its vector stored, its lists empty) into the graph on levels `level`..0 (the insertion
  ;; algorithm of the paper): descend from `entry` through levels top_level..level + 1, then on each level
  ;; below search for the `ef` nearest, keep m of them by the heuristic, and connect both ways.
  (func (export "hnsw_link") (param $node i32) (param $level i32) (param $entry i32) (param $top_level i32) (param $ef i32)
    (local $target i32) (local $current i32) (local $found i32) (local $chosen i32) (local $list i32) (local $slot i32)
    (local.set $target (call $node_address (local.get $node)))
    (local.set $current (local.get $top_level))
    (block $descended
      (loop $descend
        (br_if $descended (i32.le_s (local.get $current) (local.get $level)))
        (local.set $entry (call $greedy (local.get $target) (local.get $entry) (local.get $current)))
        (local.set $current (i32.sub (local.get $current) (i32.const 1)))
        (br $descend)))
    (local.set $current (select (local.get $level) (local.get $top_level) (i32.lt_s (local.get $level) (local.get $top_level))))
    (block $linked
      (loop $layer
        (br_if $linked (i32.lt_s (local.get $current) (i32.const 0)))
        (local.set $found (call $search_layer (local.get $target) (local.get $entry) (local.get $ef) (local.get $current) (i32.const 0)))
        (call $sort_nearest (local.get $found))
        (local.set $list (call $list_of (local.get $node) (local.get $current)))
        (local.set $chosen (call $select (local.get $node) (global.get $graph_nearest) (local.get $found) (global.get $graph_m) (global.get $graph_kept)))
        (i32.store (local.get $list) (local.get $chosen))
        (memory.copy (i32.add (local.get $list) (i32.const 4)) (global.get $graph_kept) (i32.shl (local.get $chosen) (i32.const 2)))
        (local.set $entry (i32.load (global.get $graph_nearest)))
        ;; The new node's own list is read back, since $connect reuses the scratch lists.
        (local.set $slot (i32.const 0))
        (block $connected
          (loop $next
            (br_if $connected (i32.ge_u (local.get $slot) (local.get $chosen)))
            (call $connect (i32.load offset=4 (i32.add (local.get $list) (i32.shl (local.get $slot) (i32.const 2)))) (local.get $node) (local.get $current))
            (local.set $slot (i32.add (local.get $slot) (i32.const 1)))
            (br $next)))
        (local.set $current (i32.sub (local.get $current) (i32.const 1)))
        (br $layer))))
;; Unlink `node` (flagged 2 already) from levels 0..level, repairing the lists it leaves: each live
  ;; neighbour that links back to it gets, in its place, the neighbour of `node` most similar to it that it
  ;; does not link to yet (first in `node`'s list on equal scores), or loses the link when there is none.
  ;; Nodes that link to `node` without being among its neighbours keep a link to the slot, which walks
  ;; skip until the slot is reused. `node`'s own lists are left as they are.
  (func (export "hnsw_unlink") (param $node i32) (param $level i32)
    (local $current i32)
    (block $done
      (loop $levels
        (br_if $done (i32.gt_s (local.get $current) (local.get $level)))
        (call $repair (local.get $node) (local.get $current))
        (local.set $current (i32.add (local.get $current) (i32.const 1)))
        (br $levels))))

  (func $repair (param $node i32) (param $level i32)
    (local $list i32) (local $count i32) (local $index i32) (local $owner i32) (local $owned i32) (local $owned_count i32)
    (local $position i32) (local $slot i32) (local $epoch i32) (local $marks i32) (local $buffer i32) (local $written i32)
    (local $candidate i32) (local $mark i32) (local $second i32) (local $pair v128) (local $query i32) (local $best i32) (local $best_score f32)
    (local.set $list (call $list_of (local.get $node) (local.get $level)))
    (local.set $count (i32.load (local.get $list)))
    (local.set $marks (i32.add (global.get $graph_nodes) (i32.const 4)))
    (local.set $buffer (global.get $graph_buffer))
    (block $repaired
      (loop $owners
        (br_if $repaired (i32.ge_u (local.get $index) (local.get $count)))
        (local.set $owner (i32.load offset=4 (i32.add (local.get $list) (i32.shl (local.get $index) (i32.const 2)))))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br_if $owners (i32.eq (call $flag (local.get $owner)) (i32.const 2)))
        ;; Where the owner lists `node`, if it does.
        (local.set $owned (call $list_of (local.get $owner) (local.get $level)))
        (local.set $owned_count (i32.load (local.get $owned)))
        (local.set $position (i32.const -1))
        (local.set $slot (i32.const 0))
        (block $found
          (loop $look
            (br_if $found (i32.ge_u (local.get $slot) (local.get $owned_count)))
            (if (i32.eq (i32.load offset=4 (i32.add (local.get $owned) (i32.shl (local.get $slot) (i32.const 2)))) (local.get $node))
              (then
                (local.set $position (local.get $slot))
                (br $found)))
            (local.set $slot (i32.add (local.get $slot) (i32.const 1)))
            (br $look)))
        (br_if $owners (i32.lt_s (local.get $position) (i32.const 0)))
        ;; Candidates: the neighbours of `node` that are live, not the owner and not listed by it yet.
        (local.set $epoch (call $next_epoch))
        (i32.store (i32.add (local.get $marks) (i32.shl (local.get $owner) (i32.const 3))) (local.get $epoch))
        (i32.store (i32.add (local.get $marks) (i32.shl (local.get $node) (i32.const 3))) (local.get $epoch))
        (local.set $slot (i32.const 0))
        (block $marked
          (loop $mark_owned
            (br_if $marked (i32.ge_u (local.get $slot) (local.get $owned_count)))
            (i32.store
              (i32.add (local.get $marks) (i32.shl (i32.load offset=4 (i32.add (local.get $owned) (i32.shl (local.get $slot) (i32.const 2)))) (i32.const 3)))
              (local.get $epoch))
            (local.set $slot (i32.add (local.get $slot) (i32.const 1)))
            (br $mark_owned)))
        (local.set $written (i32.const 0))
        (local.set $slot (i32.const 0))
        (block $listed
          (loop $collect
            (br_if $listed (i32.ge_u (local.get $slot) (local.get $count)))
            (local.set $candidate (i32.load offset=4 (i32.add (local.get $list) (i32.shl (local.get $slot) (i32.const 2)))))
            (local.set $mark (i32.add (local.get $marks) (i32.shl (local.get $candidate) (i32.const 3))))
            (if (i32.and (i32.ne (i32.load (local.get $mark)) (local.get $epoch)) (i32.ne (call $flag (local.get $candidate)) (i32.const 2)))
              (then
                (i32.store (local.get $mark) (local.get $epoch))
                (i32.store (i32.add (local.get $buffer) (i32.shl (local.get $written) (i32.const 2))) (local.get $candidate))
                (local.set $written (i32.add (local.get $written) (i32.const 1)))))
            (local.set $slot (i32.add (local.get $slot) (i32.const 1)))
            (br $collect)))
        (if (i32.eqz (local.get $written))
          (then
            ;; Nothing to put in its place: close the gap, keeping the order.
            (memory.copy
              (i32.add (local.get $owned) (i32.shl (i32.add (local.get $position) (i32.const 1)) (i32.const 2)))
              (i32.add (local.get $owned) (i32.shl (i32.add (local.get $position) (i32.const 2)) (i32.const 2)))
              (i32.shl (i32.sub (i32.sub (local.get $owned_count) (local.get $position)) (i32.const 1)) (i32.const 2)))
            (i32.store (local.get $owned) (i32.sub (local.get $owned_count) (i32.const 1)))
            (br $owners)))
        (local.set $query (call $node_address (local.get $owner)))
        (local.set $best (i32.const -1))
        (local.set $best_score (f32.const -inf))
        (local.set $slot (i32.const 0))
        (block $scored
          (loop $pairs
            (br_if $scored (i32.ge_u (local.get $slot) (local.get $written)))
            (local.set $second
              (select (i32.add (local.get $slot) (i32.const 1)) (local.get $slot)
                (i32.lt_u (i32.add (local.get $slot) (i32.const 1)) (local.get $written))))
            (local.set $pair
              (call $dot_pair
                (local.get $query)
                (call $node_address (i32.load (i32.add (local.get $buffer) (i32.shl (local.get $slot) (i32.const 2)))))
                (call $node_address (i32.load (i32.add (local.get $buffer) (i32.shl (local.get $second) (i32.const 2)))))
                (global.get $graph_stride)))
            (if (i32.or (i32.lt_s (local.get $best) (i32.const 0)) (f32.gt (f32x4.extract_lane 0 (local.get $pair)) (local.get $best_score)))
              (then
                (local.set $best_score (f32x4.extract_lane 0 (local.get $pair)))
                (local.set $best (i32.load (i32.add (local.get $buffer) (i32.shl (local.get $slot) (i32.const 2)))))))
            (if (i32.and (i32.ne (local.get $second) (local.get $slot)) (f32.gt (f32x4.extract_lane 1 (local.get $pair)) (local.get $best_score)))
              (then
                (local.set $best_score (f32x4.extract_lane 1 (local.get $pair)))
                (local.set $best (i32.load (i32.add (local.get $buffer) (i32.shl (local.get $second) (i32.const 2)))))))
            (local.set $slot (i32.add (local.get $slot) (i32.const 2)))
            (br $pairs)))
        (i32.store offset=4 (i32.add (local.get $owned) (i32.shl (local.get $position) (i32.const 2))) (local.get $best))
        (br $owners))))
)
