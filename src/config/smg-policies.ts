/**
 * The policies `--router smg` accepts for `--routing-policy` (smg's `--policy`) and, in PD mode, `--decode-policy`: smg's
 * COMMON_POLICY_CHOICES (bindings/python/src/smg/router_args.py, lightseekorg/smg 73da68ca).
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

/**
 * What smg's `--prefill-policy` accepts in PD mode: its PREFILL_POLICY_CHOICES, the common ones and `bucket` (a policy
 * for prefill workers only), same file and commit.
 */
export const SMG_PREFILL_POLICIES = [...SMG_POLICIES, 'bucket'] as const;

/**
 * sglang-router 0.3.x's policies (docs/routing.md), for --policy and in PD mode for --prefill-policy and --decode-policy
 * alike (sgl-router/py_src/sglang_router/router_args.py, sgl-project/sglang 083d6013).
 */
export const SGLANG_ROUTER_POLICIES = ['cache_aware', 'round_robin', 'random', 'power_of_two'] as const;
