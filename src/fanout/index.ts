// tickwork/fanout: one state pushed to groups of targets, retried and reconciled (`tw.fanout`), and
// the receiving side.
export { Fanout, type FanoutStatus, type FanoutTargetStatus, type FanoutPass } from "./fanout.js";
export { EmptyStateError } from "./errors.js";
export type { FanoutOptions, FanoutGroup, FanoutTarget, PushContext, PushSend } from "./options.js";
export type { ReconcileChooser, ReconcileContext, ReconcileOption, ReconcilePlan } from "./reconcile.js";
export { FanoutReceiver, fanoutReceiver, type ReceiverOptions, type ReceiverStorage, type StateSource } from "./receiver.js";
