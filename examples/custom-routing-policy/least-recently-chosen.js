// A custom routing policy for servelab: send each request to the eligible worker that was chosen least recently.
//
// Use it with `servelab route --routing-policy ./examples/custom-routing-policy/least-recently-chosen.js` or
// `servelab router --policy ./examples/custom-routing-policy/least-recently-chosen.js ...`.
// Plain JavaScript (ESM) so that Node loads it without a build step; the JSDoc types check it against servelab's
// RoutingPolicy interface in editors.

/** @typedef {import('servelab').RoutingPolicy} RoutingPolicy */
/** @typedef {import('servelab').RoutingPolicyOptions} RoutingPolicyOptions */
/** @typedef {import('servelab').WorkerState} WorkerState */

/**
 * servelab calls this once with the run's options (seed, extra settings) and uses the object it returns.
 * @param {RoutingPolicyOptions} _options
 * @returns {RoutingPolicy}
 */
export function createPolicy(_options) {
  /** worker url → sequence number of its last choice; a policy keeps no clock, only an order. */
  const lastChosen = new Map();
  let sequence = 0;
  return {
    name: 'least_recently_chosen',
    // This policy ignores the request's text, so the router need not parse request bodies for it.
    needsRoutingKey: false,
    /**
     * @param {import('servelab').RoutingRequest} _request
     * @param {readonly WorkerState[]} workers
     */
    choose(_request, workers) {
      /** @type {WorkerState | undefined} */
      let best;
      for (const worker of workers) {
        // A policy must only return a worker that is healthy and not drained.
        if (!worker.healthy || worker.drained) continue;
        if (best === undefined || (lastChosen.get(worker.url) ?? -1) < (lastChosen.get(best.url) ?? -1)) best = worker;
      }
      if (best !== undefined) lastChosen.set(best.url, sequence++);
      return best;
    },
    /** @param {WorkerState} worker */
    onWorkerRemoved(worker) {
      lastChosen.delete(worker.url);
    },
  };
}
