import { TickworkError } from "../core/errors.js";

/**
 * A state that would switch every receiver off (`TW_EMPTY_STATE`): an empty list is far more often a
 * transient read failure (a query that returned nothing) than a real wish to disable everything, so it
 * is refused before anything is pushed.
 */
export class EmptyStateError extends TickworkError {
  constructor(where: string) {
    super("TW_EMPTY_STATE", `${where}: the state is empty; an empty state is refused so a transient read cannot switch every receiver off`);
  }
}
