;; Axon vector search kernel: dot products and a bounded top-K min-heap fused in one pass over rows, and
;; (at the end) the dot products of HNSW graph search.
;;
;; Assembled by `npx tsx scripts/build-wasm.ts` into search-kernel.wasm (committed; a test checks the two agree).
;; The scans are driven by stores/simd/simd-index.ts and the graph kernels by stores/hnsw-index.ts; each
;; owns its memory and layout:
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
    (local $index i32) (local $row i32) (local $pointer i32) (local $query_pointer i32)
    (local $grouped_end i32) (local $end i32)
    (local $sum01 v128) (local $sum23 v128) (local $values v128) (local $weights v128) (local $sum0 f64)
    (block $scored
      (loop $next_row
        (br_if $scored (i32.ge_u (local.get $index) (local.get $count)))
        (local.set $row
          (if (result i32) (local.get $use_candidates)
            (then (i32.load (i32.add (local.get $candidates) (i32.shl (local.get $index) (i32.const 2)))))
            (else (local.get $index))))
        (local.set $pointer (i32.add (local.get $vectors) (i32.mul (local.get $row) (local.get $stride))))
        (local.set $grouped_end (i32.add (local.get $pointer) (i32.shl (i32.and (local.get $dimensions) (i32.const -4)) (i32.const 2))))
        (local.set $end (i32.add (local.get $pointer) (i32.shl (local.get $dimensions) (i32.const 2))))
        (local.set $query_pointer (local.get $query))
        (local.set $sum01 (v128.const i32x4 0 0 0 0))
        (local.set $sum23 (v128.const i32x4 0 0 0 0))
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
        (f64.store (i32.add (local.get $out) (i32.shl (local.get $index) (i32.const 3)))
          (f64.add
            (f64.add (local.get $sum0) (f64x2.extract_lane 1 (local.get $sum01)))
            (f64.add (f64x2.extract_lane 0 (local.get $sum23)) (f64x2.extract_lane 1 (local.get $sum23)))))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br $next_row))))

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

  ;; --- HNSW graph kernels, driven by stores/hnsw-index.ts ---
  ;;
  ;; Rows are `stride` bytes apart, stride a multiple of 64 (16 floats), the padding zero-filled. A query is
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
    (local $end i32) (local $weights v128)
    (local $first0 v128) (local $first1 v128) (local $second0 v128) (local $second1 v128)
    (local.set $end (i32.add (local.get $query) (local.get $stride)))
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
      (br_if $step (i32.lt_u (local.get $query) (local.get $end))))
    (local.set $first0 (f32x4.add (local.get $first0) (local.get $first1)))
    (local.set $second0 (f32x4.add (local.get $second0) (local.get $second1)))
    ;; [f0 + f2, f1 + f3, s0 + s2, s1 + s3], then lanes 0 + 1 and 2 + 3: both rows reduce alike.
    (local.set $first0 (f32x4.add
      (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $first0) (local.get $second0))
      (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $first0) (local.get $second0))))
    (f32x4.add
      (i8x16.shuffle 0 1 2 3 8 9 10 11 0 1 2 3 0 1 2 3 (local.get $first0) (local.get $first0))
      (i8x16.shuffle 4 5 6 7 12 13 14 15 4 5 6 7 4 5 6 7 (local.get $first0) (local.get $first0))))

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

  ;; One step of a graph search: of the `count` rows listed at `rows` (a node's neighbours), those whose visit
  ;; mark (i32 per row at `marks`) is not `epoch` are marked and written, in list order, to out_rows, and
  ;; their scores to out_scores. Returns how many were written. out_rows must not overlap `rows`.
  (func (export "dot_unvisited")
    (param $vectors i32) (param $stride i32) (param $query i32) (param $rows i32) (param $count i32)
    (param $marks i32) (param $epoch i32) (param $out_rows i32) (param $out_scores i32)
    (result i32)
    (local $index i32) (local $row i32) (local $mark i32) (local $written i32)
    (block $filtered
      (loop $next
        (br_if $filtered (i32.ge_u (local.get $index) (local.get $count)))
        (local.set $row (i32.load (i32.add (local.get $rows) (i32.shl (local.get $index) (i32.const 2)))))
        (local.set $mark (i32.add (local.get $marks) (i32.shl (local.get $row) (i32.const 2))))
        (if (i32.ne (i32.load (local.get $mark)) (local.get $epoch))
          (then
            (i32.store (local.get $mark) (local.get $epoch))
            (i32.store (i32.add (local.get $out_rows) (i32.shl (local.get $written) (i32.const 2))) (local.get $row))
            (local.set $written (i32.add (local.get $written) (i32.const 1)))))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br $next)))
    (call $dot_rows (local.get $vectors) (local.get $stride) (local.get $query) (local.get $out_rows) (local.get $written) (local.get $out_scores))
    (local.get $written))

  ;; The neighbour-selection heuristic of HNSW (Malkov and Yashunin, algorithm 4) for the row `base`: walk the
  ;; `count` candidates listed at `candidates`, best first, with their scores against base at `scores` (f32);
  ;; skip base itself; keep a candidate when its score beats its dot product with every row kept so far
  ;; (compared two kept rows a pass); stop once `limit` are kept. Writes the kept rows to `kept` and returns
  ;; how many.
  (func (export "select_diverse")
    (param $vectors i32) (param $stride i32) (param $base i32) (param $candidates i32) (param $scores i32)
    (param $count i32) (param $limit i32) (param $kept i32)
    (result i32)
    (local $index i32) (local $row i32) (local $pointer i32) (local $score v128) (local $other i32) (local $size i32)
    (block $selected
      (loop $next
        (br_if $selected (i32.ge_u (local.get $index) (local.get $count)))
        (br_if $selected (i32.ge_u (local.get $size) (local.get $limit)))
        (local.set $row (i32.load (i32.add (local.get $candidates) (i32.shl (local.get $index) (i32.const 2)))))
        (if (i32.ne (local.get $row) (local.get $base))
          (then
            (local.set $score (f32x4.splat (f32.load (i32.add (local.get $scores) (i32.shl (local.get $index) (i32.const 2))))))
            (local.set $pointer (i32.add (local.get $vectors) (i32.mul (local.get $row) (local.get $stride))))
            (local.set $other (i32.const 0))
            (block $rejected
              (block $diverse
                (loop $compare
                  (br_if $diverse (i32.ge_u (local.get $other) (local.get $size)))
                  (br_if $rejected
                    (v128.any_true
                      (f32x4.gt
                        (call $dot_pair
                          (local.get $pointer)
                          (call $listed_row (local.get $vectors) (local.get $stride) (local.get $kept) (local.get $other))
                          (call $listed_row (local.get $vectors) (local.get $stride) (local.get $kept)
                            (select (i32.add (local.get $other) (i32.const 1)) (local.get $other)
                              (i32.lt_u (i32.add (local.get $other) (i32.const 1)) (local.get $size))))
                          (local.get $stride))
                        (local.get $score))))
                  (local.set $other (i32.add (local.get $other) (i32.const 2)))
                  (br $compare)))
              (i32.store (i32.add (local.get $kept) (i32.shl (local.get $size) (i32.const 2))) (local.get $row))
              (local.set $size (i32.add (local.get $size) (i32.const 1))))))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br $next)))
    (local.get $size)))
