/**
 * The queue partition of an org: FNV-1a (32 bit) of the org id, modulo `partitions`. Stable
 * across processes and releases, so every ingest adds an org's deliveries to the same queue and
 * every sender wakes a parked delivery in the queue that holds it. Changing `QUEUE_PARTITIONS`
 * moves orgs between queues: drain first (README, "Scaling").
 *
 * @param partitions - integer ≥ 1
 * @returns 0 ≤ n < partitions
 */
export function queuePartitionOf(orgId: string, partitions: number): number {
  if (partitions <= 1) return 0;
  let h = 0x811c9dc5;
  for (let i = 0; i < orgId.length; i += 1) {
    h ^= orgId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % partitions;
}
