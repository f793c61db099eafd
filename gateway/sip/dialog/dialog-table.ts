import type { SipMessage, SipRequest, SipResponse } from '../message/message.js';
import type { ServerRequest } from '../ua/server-request.js';

/** What the stack asks of a dialog (Dialog implements it; kept here so the table needs no import of it). */
export interface DialogEntry {
  readonly key: string;
  receiveAck(ack: SipRequest): void;
  receiveRequest(sreq: ServerRequest): void;
  receiveStray2xx(res: SipResponse): void;
}

/** Dialogs by id: Call-ID plus local and remote tag (RFC 3261 sec. 12, 12.2.2). */
export class DialogTable {
  private readonly byId = new Map<string, DialogEntry>();

  get size(): number {
    return this.byId.size;
  }

  add(dialog: DialogEntry): void {
    this.byId.set(dialog.key, dialog);
  }

  remove(dialog: DialogEntry): void {
    if (this.byId.get(dialog.key) === dialog) this.byId.delete(dialog.key);
  }

  /** A request we received: our tag is in To, the peer's in From. */
  findForRequest(msg: SipMessage): DialogEntry | undefined {
    const local = msg.to.tag;
    return local === undefined ? undefined : this.byId.get(dialogKey(msg.callId, local, msg.from.tag ?? ''));
  }

  /** A response to a request we sent: our tag is in From, the peer's in To. */
  findForResponse(msg: SipMessage): DialogEntry | undefined {
    const local = msg.from.tag;
    return local === undefined ? undefined : this.byId.get(dialogKey(msg.callId, local, msg.to.tag ?? ''));
  }

  all(): IterableIterator<DialogEntry> {
    return this.byId.values();
  }
}

export const dialogKey = (callId: string, localTag: string, remoteTag: string): string => `${callId}|${localTag}|${remoteTag}`;
