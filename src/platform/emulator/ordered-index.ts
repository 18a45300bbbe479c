/**
 * A Map that also answers "the items from position i" in O(page) time: creation order is kept
 * in an array that is appended to on insert and rebuilt lazily (once) after a delete, so paging
 * through 100k entries is linear overall rather than quadratic.
 */
export class OrderedIndex<V> {
  private readonly map = new Map<string, V>();
  private order: string[] = [];
  private stale = false;

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  set(key: string, value: V): void {
    if (!this.map.has(key) && !this.stale) this.order.push(key);
    this.map.set(key, value);
  }

  delete(key: string): boolean {
    const removed = this.map.delete(key);
    if (removed) this.stale = true;
    return removed;
  }

  clear(): void {
    this.map.clear();
    this.order = [];
    this.stale = false;
  }

  values(): IterableIterator<V> {
    return this.map.values();
  }

  keys(): IterableIterator<string> {
    return this.map.keys();
  }

  /** Keys in creation order (the array is shared; do not mutate it). */
  orderedKeys(): readonly string[] {
    if (this.stale) {
      this.order = [...this.map.keys()];
      this.stale = false;
    }
    return this.order;
  }

  /** Up to `count` values starting at zero-based `offset`, in creation order. */
  slice(offset: number, count: number): V[] {
    const keys = this.orderedKeys();
    const out: V[] = [];
    for (let i = offset; i < keys.length && out.length < count; i++) {
      const value = this.map.get(keys[i] as string);
      if (value !== undefined) out.push(value);
    }
    return out;
  }
}
