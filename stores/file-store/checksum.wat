;; The checksum of FileStore's files (stores/file-store/file-store-checksum.ts), assembled by scripts/build-wasm.ts.
;;
;; 32 lanes of 32 bits: the data is read as little-endian 32-bit words, word i goes to lanes i mod 16 of two
;; accumulator sets, each updated by an xxHash32-style round (a multiply, an add, a rotate and a multiply, all by
;; odd constants modulo 2^32). Each round is a bijection of the word for a fixed accumulator and of the
;; accumulator for a fixed word, so a change confined to one 32-bit word (any single flipped bit among them)
;; always changes that word's two lanes; the final mix in JavaScript keeps every lane. The two sets use different
;; constants, so damage in several words goes unseen only if both sets miss it.
;;
;; Memory: bytes 0..127 hold the state (set a, then set b: 4 vectors of 4 lanes each), data starts at byte 128.
(module
  (memory (export "memory") 3 3)
  (global $P1 v128 (v128.const i32x4 0x9E3779B1 0x9E3779B1 0x9E3779B1 0x9E3779B1))
  (global $P2 v128 (v128.const i32x4 0x85EBCA77 0x85EBCA77 0x85EBCA77 0x85EBCA77))
  (global $P3 v128 (v128.const i32x4 0xC2B2AE3D 0xC2B2AE3D 0xC2B2AE3D 0xC2B2AE3D))
  (global $P4 v128 (v128.const i32x4 0x27D4EB2F 0x27D4EB2F 0x27D4EB2F 0x27D4EB2F))

  ;; Fold the `blocks` 64-byte blocks that start at byte `start` into the state.
  (func (export "update") (param $start i32) (param $blocks i32)
    (local $at i32) (local $end i32) (local $w v128) (local $t v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $b0 v128) (local $b1 v128) (local $b2 v128) (local $b3 v128)
    (local.set $a0 (v128.load offset=0 (i32.const 0)))
    (local.set $b0 (v128.load offset=64 (i32.const 0)))
    (local.set $a1 (v128.load offset=16 (i32.const 0)))
    (local.set $b1 (v128.load offset=80 (i32.const 0)))
    (local.set $a2 (v128.load offset=32 (i32.const 0)))
    (local.set $b2 (v128.load offset=96 (i32.const 0)))
    (local.set $a3 (v128.load offset=48 (i32.const 0)))
    (local.set $b3 (v128.load offset=112 (i32.const 0)))
    (local.set $at (local.get $start))
    (local.set $end (i32.add (local.get $start) (i32.shl (local.get $blocks) (i32.const 6))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        ;; word group 0: lanes 0..3
        (local.set $w (v128.load offset=0 (local.get $at)))
        (local.set $t (i32x4.add (local.get $a0) (i32x4.mul (local.get $w) (global.get $P2))))
        (local.set $a0 (i32x4.mul (v128.or (i32x4.shl (local.get $t) (i32.const 13)) (i32x4.shr_u (local.get $t) (i32.const 19))) (global.get $P1)))
        (local.set $t (i32x4.add (local.get $b0) (i32x4.mul (local.get $w) (global.get $P3))))
        (local.set $b0 (i32x4.mul (v128.or (i32x4.shl (local.get $t) (i32.const 17)) (i32x4.shr_u (local.get $t) (i32.const 15))) (global.get $P4)))
        ;; word group 1: lanes 4..7
        (local.set $w (v128.load offset=16 (local.get $at)))
        (local.set $t (i32x4.add (local.get $a1) (i32x4.mul (local.get $w) (global.get $P2))))
        (local.set $a1 (i32x4.mul (v128.or (i32x4.shl (local.get $t) (i32.const 13)) (i32x4.shr_u (local.get $t) (i32.const 19))) (global.get $P1)))
        (local.set $t (i32x4.add (local.get $b1) (i32x4.mul (local.get $w) (global.get $P3))))
        (local.set $b1 (i32x4.mul (v128.or (i32x4.shl (local.get $t) (i32.const 17)) (i32x4.shr_u (local.get $t) (i32.const 15))) (global.get $P4)))
        ;; word group 2: lanes 8..11
        (local.set $w (v128.load offset=32 (local.get $at)))
        (local.set $t (i32x4.add (local.get $a2) (i32x4.mul (local.get $w) (global.get $P2))))
        (local.set $a2 (i32x4.mul (v128.or (i32x4.shl (local.get $t) (i32.const 13)) (i32x4.shr_u (local.get $t) (i32.const 19))) (global.get $P1)))
        (local.set $t (i32x4.add (local.get $b2) (i32x4.mul (local.get $w) (global.get $P3))))
        (local.set $b2 (i32x4.mul (v128.or (i32x4.shl (local.get $t) (i32.const 17)) (i32x4.shr_u (local.get $t) (i32.const 15))) (global.get $P4)))
        ;; word group 3: lanes 12..15
        (local.set $w (v128.load offset=48 (local.get $at)))
        (local.set $t (i32x4.add (local.get $a3) (i32x4.mul (local.get $w) (global.get $P2))))
        (local.set $a3 (i32x4.mul (v128.or (i32x4.shl (local.get $t) (i32.const 13)) (i32x4.shr_u (local.get $t) (i32.const 19))) (global.get $P1)))
        (local.set $t (i32x4.add (local.get $b3) (i32x4.mul (local.get $w) (global.get $P3))))
        (local.set $b3 (i32x4.mul (v128.or (i32x4.shl (local.get $t) (i32.const 17)) (i32x4.shr_u (local.get $t) (i32.const 15))) (global.get $P4)))
        (local.set $at (i32.add (local.get $at) (i32.const 64)))
        (br $next)))
    (v128.store offset=0 (i32.const 0) (local.get $a0))
    (v128.store offset=64 (i32.const 0) (local.get $b0))
    (v128.store offset=16 (i32.const 0) (local.get $a1))
    (v128.store offset=80 (i32.const 0) (local.get $b1))
    (v128.store offset=32 (i32.const 0) (local.get $a2))
    (v128.store offset=96 (i32.const 0) (local.get $b2))
    (v128.store offset=48 (i32.const 0) (local.get $a3))
    (v128.store offset=112 (i32.const 0) (local.get $b3))))
