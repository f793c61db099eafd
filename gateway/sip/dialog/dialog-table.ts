import type { SipMessage } from '../message/message.js';
import type { Dialog } from './dialog.js';

/** Dialogs by id: Call-ID plus local and remote tag (RFC 3261 sec. 12, 12.2.2). */
export class DialogTable {
  private readonly byId = new Map<string, Dialog>();

  get size(): number {
    return this.byId.size;
  }

  add(dialog: Dialog): void {
    this.byId.set(dialog.key, dialog);
  }

  remove(dialog: Dialog): void {
    if (this.byId.get(dialog.key) === dialog) this.byId.delete(dialog.key);
  }

  /** A request we received: our tag is in To, the peer's in From. */
  findForRequest(msg: SipMessage): Dialog | undefined {
    const local = msg.to.tag;
    return local === undefined ? undefined : this.byId.get(dialogKey(msg.callId, local, msg.from.tag ?? ''));
  }

  /** A response to a request we sent: our tag is in From, the peer's in To. */
  findForResponse(msg: SipMessage): Dialog | undefined {
    const local = msg.from.tag;
    return local === undefined ? undefined : this.byId.get(dialogKey(msg.callId, local, msg.to.tag ?? ''));
  }

  all(): IterableIterator<Dialog> {
    return this.byId.values();
  }
}

export const dialogKey = (callId: string, localTag: string, remoteTag: string): string => `${callId}|${localTag}|${remoteTag}`;
