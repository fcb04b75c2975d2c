/**
 * The strongly connected components of a graph of `n` nodes given as successor lists (iterative
 * Tarjan, so deep graphs do not overflow the stack). Components come out in reverse topological
 * order (a component after every component it reaches).
 */
export function strongComponents(n: number, edges: readonly (readonly number[])[]): { componentOf: Int32Array; members: number[][] } {
  const componentOf = new Int32Array(n).fill(-1);
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const members: number[][] = [];
  let counter = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    const work: [number, number][] = [[root, 0]];
    index[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const [v, k] = frame;
      if (k < edges[v]!.length) {
        frame[1]++;
        const w = edges[v]![k]!;
        if (index[w] === -1) {
          index[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          work.push([w, 0]);
        } else if (onStack[w]) low[v] = Math.min(low[v]!, index[w]!);
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]![0];
        low[parent] = Math.min(low[parent]!, low[v]!);
      }
      if (low[v] === index[v]) {
        const c = members.length;
        const group: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          componentOf[w] = c;
          group.push(w);
        } while (w !== v);
        members.push(group);
      }
    }
  }
  return { componentOf, members };
}
