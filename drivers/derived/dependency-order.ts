/**
 * The order derived tags are evaluated in: every tag after the derived tags it reads, so one
 * pass over a store batch sees each input's new value. A loop has no such order; it is named
 * tag by tag so the profile can be fixed.
 */

/** A node of the graph: a tag and the tags it reads. */
export interface DependencyNode {
  id: string;
  references: readonly string[];
}

/** The order, or the first loop found (its first tag repeated at the end). */
export type DependencyOrder = { ok: true; order: number[] } | { ok: false; loop: string[] };

/**
 * Orders `nodes` so that each comes after the nodes it references (references to ids not among
 * the nodes are inputs from elsewhere and ignored); ties keep the given order.
 */
export function dependencyOrder(nodes: readonly DependencyNode[]): DependencyOrder {
  const indexOf = new Map<string, number>();
  nodes.forEach((node, index) => {
    if (!indexOf.has(node.id)) indexOf.set(node.id, index);
  });
  // 0 unvisited, 1 on the current path, 2 done.
  const state = new Uint8Array(nodes.length);
  const order: number[] = [];
  for (let root = 0; root < nodes.length; root++) {
    if (state[root] !== 0) continue;
    // Iterative depth-first search: a chain of 100,000 tags must not overflow the stack.
    const path: number[] = [root];
    const next: number[] = [0];
    state[root] = 1;
    while (path.length > 0) {
      const top = path.length - 1;
      const current = path[top] as number;
      const references = (nodes[current] as DependencyNode).references;
      const position = next[top] as number;
      if (position < references.length) {
        next[top] = position + 1;
        const target = indexOf.get(references[position] as string);
        if (target === undefined || state[target] === 2) continue;
        if (state[target] === 1) {
          const from = path.indexOf(target);
          const loop = path.slice(from).map((index) => (nodes[index] as DependencyNode).id);
          return { ok: false, loop: [...loop, (nodes[target] as DependencyNode).id] };
        }
        state[target] = 1;
        path.push(target);
        next.push(0);
      } else {
        state[current] = 2;
        order.push(current);
        path.pop();
        next.pop();
      }
    }
  }
  return { ok: true, order };
}
