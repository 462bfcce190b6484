import { describe, expect, it } from 'vitest';
import { ScoredHeap, TopKHeap } from '../../../stores/indexes/top-k-heap.ts';

describe('TopKHeap', () => {
  it('keeps the best k, best first, ties to the lower number', () => {
    const scores = [0.5, 0.9, 0.1, 0.9, 0.7, 0.3, 0.9, 0.05];
    const heap = new TopKHeap(4);
    scores.forEach((score, number) => heap.offer(score, number));
    expect(heap.drain()).toEqual([
      { score: 0.9, number: 1 },
      { score: 0.9, number: 3 },
      { score: 0.9, number: 6 },
      { score: 0.7, number: 4 },
    ]);
  });

  it('keeps everything when offered fewer than k, and nothing with k = 0', () => {
    const heap = new TopKHeap(10);
    heap.offer(1, 2);
    heap.offer(3, 1);
    expect(heap.drain()).toEqual([
      { score: 3, number: 1 },
      { score: 1, number: 2 },
    ]);
    const empty = new TopKHeap(0);
    empty.offer(1, 1);
    expect(empty.drain()).toEqual([]);
  });

  it('agrees with a full sort on many items offered in reverse order of number', () => {
    const items = Array.from({ length: 500 }, (_, number) => ({ score: ((number * 7919) % 101) / 10, number }));
    const heap = new TopKHeap(25);
    for (const item of [...items].reverse()) heap.offer(item.score, item.number);
    const expected = [...items].sort((left, right) => right.score - left.score || left.number - right.number).slice(0, 25);
    expect(heap.drain()).toEqual(expected);
  });
});

describe('ScoredHeap', () => {
  it('pops best first as a max-heap and worst first as a min-heap, ties by node, growing past its first capacity', () => {
    const entries = Array.from({ length: 40 }, (_, node) => ({ node, score: (node * 7) % 5 }));
    const best = new ScoredHeap(true, 4);
    const worst = new ScoredHeap(false, 4);
    for (const { node, score } of entries) {
      best.push(node, score);
      worst.push(node, score);
    }
    const byBest = [...entries].sort((left, right) => right.score - left.score || left.node - right.node).map((entry) => entry.node);
    const popped = (heap: ScoredHeap) => Array.from({ length: heap.size }, () => heap.pop());
    expect(popped(best)).toEqual(byBest);
    expect(popped(worst)).toEqual([...byBest].reverse());
  });

  it('replaceTop swaps the top for a new entry in one sift', () => {
    const heap = new ScoredHeap(false);
    for (const [node, score] of [
      [1, 0.5],
      [2, 0.1],
      [3, 0.9],
    ] as const)
      heap.push(node, score);
    expect([heap.topNode(), heap.topScore()]).toEqual([2, 0.1]);
    heap.replaceTop(4, 0.7);
    expect([heap.topNode(), heap.topScore()]).toEqual([1, 0.5]);
    expect(heap.size).toBe(3);
  });
});
