/** The hash slot (0..16383) Redis Cluster assigns a key (its `{hash tag}` when it has one). */
declare module 'cluster-key-slot' {
  export default function calculateSlot(key: string | Buffer): number;
}
