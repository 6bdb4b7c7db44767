/**
 * The policies `--router smg` accepts: smg's COMMON_POLICY_CHOICES (bindings/python/src/smg/router_args.py,
 * lightseekorg/smg 73da68ca). smg's `bucket` is for prefill workers in PD disaggregation only, which servelab does not
 * launch, so it is not offered.
 */
export const SMG_POLICIES = [
  'random',
  'round_robin',
  'passthrough',
  'cache_aware',
  'power_of_two',
  'least_load',
  'manual',
  'consistent_hashing',
  'prefix_hash',
] as const;

/** sglang-router 0.3.x's policies (docs/routing.md). */
export const SGLANG_ROUTER_POLICIES = ['cache_aware', 'round_robin', 'random', 'power_of_two'] as const;
