/** The flows scenario's queues: flow leaves and batch items, flow parents and batch completions, keyed jobs. */
export const FLOW_QUEUES = { child: "chaos-child", parent: "chaos-parent", keyed: "chaos-keyed" } as const;
