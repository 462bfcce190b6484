/**
 * The heaps of the indexes: `ScoredHeap`, a growable binary heap of (node, score) used as the HNSW search's
 * frontier and result set, and `TopKHeap`, the bounded best-k on top of it that exact scans and BM25 use.
 */

/**
 * A binary heap of (node, score) in two parallel typed arrays that grow when full: a max-heap when
 * `bestOnTop` (the HNSW search's frontier), else a min-heap (the worst kept result on top, ready to be dropped). Equal scores rank the
 * lower node better, so results do not depend on the order nodes were offered in.
 */
export class ScoredHeap {
  size = 0;
  private nodes: Int32Array;
  private scores: Float64Array;
  constructor(
    private readonly bestOnTop: boolean,
    initialCapacity = 256,
  ) {
    this.nodes = new Int32Array(Math.max(1, initialCapacity));
    this.scores = new Float64Array(Math.max(1, initialCapacity));
  }

  get byteLength(): number {
    return this.nodes.byteLength + this.scores.byteLength;
  }

  clear(): void {
    this.size = 0;
  }

  topScore(): number {
    return this.scores[0];
  }

  topNode(): number {
    return this.nodes[0];
  }

  push(node: number, score: number): void {
    if (this.size === this.nodes.length) {
      const nodes = new Int32Array(2 * this.size);
      nodes.set(this.nodes);
      this.nodes = nodes;
      const scores = new Float64Array(2 * this.size);
      scores.set(this.scores);
      this.scores = scores;
    }
    let position = this.size++;
    while (position > 0) {
      const parent = (position - 1) >> 1;
      if (!this.above(score, node, this.scores[parent], this.nodes[parent])) break;
      this.nodes[position] = this.nodes[parent];
      this.scores[position] = this.scores[parent];
      position = parent;
    }
    this.nodes[position] = node;
    this.scores[position] = score;
  }

  /** Remove the top and return its node. */
  pop(): number {
    const top = this.nodes[0];
    const last = --this.size;
    if (last > 0) this.siftDown(this.nodes[last], this.scores[last]);
    return top;
  }

  /** Replace the top with (node, score): a push and a pop in one sift. */
  replaceTop(node: number, score: number): void {
    this.siftDown(node, score);
  }

  private siftDown(node: number, score: number): void {
    const size = this.size;
    let position = 0;
    for (;;) {
      let child = 2 * position + 1;
      if (child >= size) break;
      if (child + 1 < size && this.above(this.scores[child + 1], this.nodes[child + 1], this.scores[child], this.nodes[child])) child++;
      if (!this.above(this.scores[child], this.nodes[child], score, node)) break;
      this.nodes[position] = this.nodes[child];
      this.scores[position] = this.scores[child];
      position = child;
    }
    this.nodes[position] = node;
    this.scores[position] = score;
  }

  /** Whether (leftScore, leftNode) belongs nearer the top than (rightScore, rightNode). */
  private above(leftScore: number, leftNode: number, rightScore: number, rightNode: number): boolean {
    if (leftScore !== rightScore) return this.bestOnTop ? leftScore > rightScore : leftScore < rightScore;
    return this.bestOnTop ? leftNode < rightNode : leftNode > rightNode;
  }
}

/**
 * A bounded min-heap of (score, number) for keeping the best `capacity` hits of a scan: the root is the worst
 * kept hit, so a better one replaces it in O(log k) and the heap never grows past its capacity. A lower score
 * is worse; on equal scores the higher number is worse, so ties go to the item numbered (usually, added) first.
 */
export class TopKHeap {
  private readonly heap: ScoredHeap;
  /** The worst kept score once full, in a plain field: most offers of a scan are turned away by this one comparison. */
  private floor = Number.NEGATIVE_INFINITY;

  constructor(private readonly capacity: number) {
    this.heap = new ScoredHeap(false, capacity);
  }

  offer(score: number, number: number): void {
    if (this.capacity === 0) return;
    const heap = this.heap;
    if (heap.size < this.capacity) {
      heap.push(number, score);
      if (heap.size === this.capacity) this.floor = heap.topScore();
    } else if (score > this.floor || (score === this.floor && heap.topNode() > number)) {
      heap.replaceTop(number, score);
      this.floor = heap.topScore();
    }
  }

  /** Everything kept, best first; the heap is left empty. */
  drain(): { score: number; number: number }[] {
    const result: { score: number; number: number }[] = new Array(this.heap.size);
    // Popping a min-heap gives the worst first, ties to the higher number first: fill from the back.
    for (let index = result.length - 1; index >= 0; index--) {
      const score = this.heap.topScore();
      result[index] = { score, number: this.heap.pop() };
    }
    return result;
  }
}
