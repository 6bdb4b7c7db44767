import type { NodeSummary } from '../../types/summary.js';

/**
 * Nodes in the order of their index (the one `--failure-schedule` and the events use), then by URL for a node the
 * run could not index: the summary lists them as the records first named them, which reads as 3, 2, 0, 1.
 */
export function nodesInIndexOrder<Node extends Pick<NodeSummary, 'node' | 'host'>>(nodes: readonly Node[]): Node[] {
  return [...nodes].sort((a, b) => {
    if (a.node !== b.node) {
      if (a.node === null) return 1;
      if (b.node === null) return -1;
      return a.node - b.node;
    }
    // Numbers inside names compare as numbers: node-2 before node-10, port 30002 before 30010.
    return a.host.localeCompare(b.host, 'en', { numeric: true });
  });
}

/** How a chart names a node: by its index where the run knows it, else by its URL. */
export function nodeLabel(node: Pick<NodeSummary, 'node' | 'host'>): string {
  return node.node === null ? node.host : `node ${node.node}`;
}
