// Helpers for testing code built on tickwork: a clock that moves only when told to.
export { fakeClock, type FakeClock } from "./fake-clock.js";
