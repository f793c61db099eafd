import type { SipMessage, SipRequest, SipResponse } from '../message/message.js';
import type { ServerRequest } from '../ua/server-request.js';

/** What the stack asks of a dialog (Dialog implements it; kept here so the table needs no import of it). */
export interface DialogEntry {
  readonly key: string;
  readonly callId: string;
  receiveAck(ack: SipRequest): void;
  receiveRequest(sreq: ServerRequest): void;
  receiveStray2xx(res: SipResponse): void;
}

/** Dialogs by id: Call-ID plus local and remote tag (RFC 3261 sec. 12, 12.2.2). */
export class DialogTable {
  private readonly byId = new Map<string, DialogEntry>();
  /** Live dialogs per Call-ID: admission lets their requests through before any parse (receive-gate.ts). */
  private readonly callIds = new Map<string, number>();

  get size(): number {
    return this.byId.size;
  }

  add(dialog: DialogEntry): void {
    const replaced = this.byId.get(dialog.key);
    this.byId.set(dialog.key, dialog);
    if (replaced === undefined) this.callIds.set(dialog.callId, (this.callIds.get(dialog.callId) ?? 0) + 1);
  }

  remove(dialog: DialogEntry): void {
    if (this.byId.get(dialog.key) !== dialog) return;
    this.byId.delete(dialog.key);
    const n = (this.callIds.get(dialog.callId) ?? 1) - 1;
    if (n > 0) this.callIds.set(dialog.callId, n);
    else this.callIds.delete(dialog.callId);
  }

  /** True while a dialog with this Call-ID is live (early or confirmed). */
  hasCallId(callId: string): boolean {
    return this.callIds.has(callId);
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
