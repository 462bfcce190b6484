/**
 * A bounded min-heap of (score, number) for keeping the best `capacity` hits of a scan: the root is the worst
 * kept hit, so a better one replaces it in O(log k) and the heap never grows past its capacity. A lower score
 * is worse; on equal scores the higher number is worse, so ties go to the item numbered (usually, added) first.
 */
export class TopKHeap {
  private readonly scores: Float64Array;
  private readonly numbers: Uint32Array;
  private size = 0;

  constructor(private readonly capacity: number) {
    this.scores = new Float64Array(capacity);
    this.numbers = new Uint32Array(capacity);
  }

  offer(score: number, number: number): void {
    if (this.capacity === 0) return;
    if (this.size < this.capacity) {
      this.scores[this.size] = score;
      this.numbers[this.size] = number;
      this.siftUp(this.size++);
    } else if (this.isWorse(this.scores[0], this.numbers[0], score, number)) {
      this.scores[0] = score;
      this.numbers[0] = number;
      this.siftDown(0);
    }
  }

  /** Everything kept, best first. */
  drain(): { score: number; number: number }[] {
    const result: { score: number; number: number }[] = [];
    for (let index = 0; index < this.size; index++) result.push({ score: this.scores[index], number: this.numbers[index] });
    return result.sort((left, right) => right.score - left.score || left.number - right.number);
  }

  private isWorse(scoreA: number, numberA: number, scoreB: number, numberB: number): boolean {
    return scoreA < scoreB || (scoreA === scoreB && numberA > numberB);
  }

  private siftUp(index: number): void {
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.isWorse(this.scores[index], this.numbers[index], this.scores[parent], this.numbers[parent])) return;
      this.swap(index, parent);
      index = parent;
    }
  }

  private siftDown(index: number): void {
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let worst = index;
      if (left < this.size && this.isWorse(this.scores[left], this.numbers[left], this.scores[worst], this.numbers[worst])) worst = left;
      if (right < this.size && this.isWorse(this.scores[right], this.numbers[right], this.scores[worst], this.numbers[worst])) worst = right;
      if (worst === index) return;
      this.swap(index, worst);
      index = worst;
    }
  }

  private swap(left: number, right: number): void {
    const score = this.scores[left];
    const number = this.numbers[left];
    this.scores[left] = this.scores[right];
    this.numbers[left] = this.numbers[right];
    this.scores[right] = score;
    this.numbers[right] = number;
  }
}