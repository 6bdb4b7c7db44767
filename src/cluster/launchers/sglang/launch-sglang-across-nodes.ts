import type { PlacedProcess, ServerHandle } from '../../../types/cluster.js';
import { localPlacement } from '../../placement/local/local-placement.js';
import { launchSglangServer, type SglangLaunchSettings } from './launch-sglang-server.js';
import { sglangServerArgs, visibleDevices } from './sglang-server-args.js';

/**
 * One SGLang server whose ranks span `nodes` (`--nnodes`): rank r runs on `nodes[r]` with `--node-rank r`, all meeting
 * at `--dist-init-addr` on rank 0's node (a port that node says is free). Ranks 1.. start first and wait there; rank 0
 * is launched, waited for and watched like any server, and is the one registered with the router: only it serves HTTP.
 * The handle is one server: it ends when any rank ends, and stopping or signalling it reaches every rank.
 */
export async function launchSglangAcrossNodes(settings: SglangLaunchSettings & { nodes: readonly string[] }): Promise<ServerHandle> {
  const placement = settings.placement ?? localPlacement;
  const [head, ...others] = settings.nodes;
  if (head === undefined) throw new Error('launchSglangAcrossNodes needs at least one node');
  const distInitAddr = `${placement.hostOf(head)}:${await placement.freePort(head)}`;
  const rank = (nodeRank: number) => ({ nnodes: settings.nodes.length, nodeRank, distInitAddr });
  const followers: PlacedProcess[] = others.map((node, offset) =>
    placement.spawn({
      name: `${settings.name} rank ${offset + 1}`,
      node,
      command: settings.pythonExecutable ?? 'python',
      args: sglangServerArgs({ ...settings, host: placement.hostOf(node), multiNode: rank(offset + 1) }),
      env: { CUDA_VISIBLE_DEVICES: visibleDevices(settings.gpuId, settings.tpSize) },
      ...(settings.logPath === undefined ? {} : { logPath: settings.logPath.replace(/(\.log)?$/, `-rank-${offset + 1}.log`) }),
      stopGraceMs: 15_000,
    }),
  );
  let leader: ServerHandle;
  try {
    leader = await launchSglangServer({ ...settings, node: head, multiNode: rank(0) });
  } catch (error) {
    await Promise.all(followers.map((follower) => follower.stop()));
    throw error;
  }
  return {
    ...leader,
    exited: Promise.race([leader.exited, ...followers.map((follower) => follower.exited)].filter((exited) => exited !== undefined)),
    stop: async () => {
      await Promise.all([leader.stop(), ...followers.map((follower) => follower.stop())]);
    },
    signal: (signal) => {
      leader.signal?.(signal);
      for (const follower of followers) follower.signal(signal);
    },
    relaunch: () => launchSglangAcrossNodes({ ...settings, signal: undefined }),
  };
}
