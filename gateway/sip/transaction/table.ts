import type { SipRequest, SipResponse } from '../message/message.js';
import { InviteClientTransaction, NonInviteClientTransaction } from './client.js';
import { clientTransactionKey, serverTransactionKey } from './keys.js';
import { InviteServerTransaction, NonInviteServerTransaction } from './server.js';
import type { TransactionRegistry } from './base.js';
import type { ClientTransactionUser, ServerTransactionUser, TransactionOptions, TransactionTransport } from './types.js';

export type ClientTransaction = InviteClientTransaction | NonInviteClientTransaction;
export type ServerTransaction = InviteServerTransaction | NonInviteServerTransaction;

export type IncomingRequest =
  /** A retransmission or ACK an existing transaction has dealt with. */
  | { readonly kind: 'absorbed' }
  /** An ACK outside any transaction: the ACK for a 2xx, which belongs to the dialog (sec. 17.1.1.3). */
  | { readonly kind: 'ack' }
  /** A new request; a CANCEL also names the INVITE transaction it targets, if still known (sec. 9.2). */
  | { readonly kind: 'new'; readonly transaction: ServerTransaction; readonly cancels?: InviteServerTransaction };

const ABSORBED: IncomingRequest = { kind: 'absorbed' };
const ACK: IncomingRequest = { kind: 'ack' };

/**
 * Routes messages to transactions by the matching rules of RFC 3261 sec. 17.1.3 and 17.2.3 and
 * forgets each transaction when it terminates, so the table holds only live ones.
 */
export class TransactionTable implements TransactionRegistry {
  private readonly clients = new Map<string, ClientTransaction>();
  private readonly servers = new Map<string, ServerTransaction>();

  constructor(private readonly options: TransactionOptions) {}

  get size(): { clients: number; servers: number } {
    return { clients: this.clients.size, servers: this.servers.size };
  }

  /** Creates, registers and starts the client transaction for an outgoing request (not ACK). */
  startClient(req: SipRequest, transport: TransactionTransport, tu: ClientTransactionUser): ClientTransaction {
    const key = clientTransactionKey(req);
    const tx: ClientTransaction =
      req.method === 'INVITE'
        ? new InviteClientTransaction(req, transport, tu, this.options)
        : new NonInviteClientTransaction(req, transport, tu, this.options);
    if (key !== undefined) {
      tx.registry = this;
      tx.registryKey = key;
      this.clients.set(key, tx);
    }
    tx.start();
    return tx;
  }

  /** True while a server transaction has this key (keys.ts): a request with it is a retransmission. */
  hasServer(key: string): boolean {
    return this.servers.has(key);
  }

  /** A terminated transaction leaves the index, unless a newer one already took its key. */
  release(key: string, tx: object): void {
    if (this.servers.get(key) === tx) this.servers.delete(key);
    else if (this.clients.get(key) === tx) this.clients.delete(key);
  }

  /** Hands a response to its client transaction; false when none matches (stray response). */
  receiveResponse(res: SipResponse): boolean {
    const key = clientTransactionKey(res);
    const tx = key === undefined ? undefined : this.clients.get(key);
    if (!tx) return false;
    tx.receiveResponse(res);
    return true;
  }

  receiveRequest(req: SipRequest, transport: TransactionTransport, tu: ServerTransactionUser): IncomingRequest {
    const key = serverTransactionKey(req);
    const existing = key === undefined ? undefined : this.servers.get(key);
    if (existing) {
      existing.receiveRequest(req);
      return ABSORBED;
    }
    if (req.method === 'ACK') return ACK;
    const tx: ServerTransaction =
      req.method === 'INVITE'
        ? new InviteServerTransaction(req, transport, tu, this.options)
        : new NonInviteServerTransaction(req, transport, tu, this.options);
    if (key === undefined) return { kind: 'new', transaction: tx };
    tx.registry = this;
    tx.registryKey = key;
    this.servers.set(key, tx);
    if (req.method !== 'CANCEL') return { kind: 'new', transaction: tx };
    // RFC 3261 sec. 9.2: the CANCEL matches the INVITE with the same branch and sent-by.
    const target = this.servers.get(`${key.slice(0, -'CANCEL'.length)}INVITE`);
    return target instanceof InviteServerTransaction
      ? { kind: 'new', transaction: tx, cancels: target }
      : { kind: 'new', transaction: tx };
  }
}
