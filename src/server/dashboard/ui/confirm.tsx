import { useEffect, useRef, useState } from "preact/hooks";

/**
 * A button for an action on many items at once, or one that cannot be undone: it asks first, in a
 * modal dialog that says what will happen, and acts only on the dialog's confirm button (Escape or
 * Cancel leave things as they are). `ariaLabel` names the button where its label alone is vague.
 */
export function ConfirmButton(props: { label: string; ariaLabel?: string; question: string; detail?: string; confirm: string; disabled: boolean; onConfirm: () => void }) {
  const [open, setOpen] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = dialog.current;
    if (open && d && !d.open) d.showModal();
  }, [open]);
  return (
    <>
      <button type="button" disabled={props.disabled} aria-label={props.ariaLabel} onClick={() => setOpen(true)}>
        {props.label}
      </button>
      {open ? (
        <dialog ref={dialog} class="confirm" aria-label={props.question} onClose={() => setOpen(false)}>
          <p>
            <strong>{props.question}</strong>
          </p>
          {props.detail ? <p class="sub">{props.detail}</p> : null}
          <div class="toolbar">
            <button type="button" onClick={() => dialog.current?.close()}>
              Cancel
            </button>
            <button
              type="button"
              class="primary"
              onClick={() => {
                dialog.current?.close();
                props.onConfirm();
              }}
            >
              {props.confirm}
            </button>
          </div>
        </dialog>
      ) : null}
    </>
  );
}
