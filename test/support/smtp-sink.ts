/**
 * An SMTP server for tests: a real `smtp-server` on 127.0.0.1 (random port, no TLS, any or no
 * login accepted) that parses every message it accepts with `mailparser` and keeps it. Its
 * answers can be scripted: a recipient refused with a given code (550, 450...), the next N
 * messages refused at DATA with a code (421...), and it can go down and come back up on the
 * same port.
 *
 *   const sink = await startSmtpSink();
 *   // SMTP_URL = sink.url
 *   sink.refuseRecipient("gone@example.com", 550);
 *   sink.refuseNextMessages(1, 421);
 *   await sink.stop(); await sink.restart();
 *
 * On a shared Postgres any email worker of the test run may send a message; look messages up by
 * recipient (`sink.to(address)`), which each test makes unique.
 */
import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface SmtpSink {
  /** smtp://user:secret@127.0.0.1:{port} */
  url: string;
  port: number;
  /** Every message accepted, in arrival order, with the envelope recipients. */
  messages: { envelopeTo: string[]; mail: ParsedMail }[];
  /** The messages accepted for `address` (envelope recipient). */
  to(address: string): ParsedMail[];
  /** Refuses `address` at RCPT TO with `code` from now on (undefined: accept again). */
  refuseRecipient(address: string, code: number | undefined): void;
  /** Refuses the next `count` messages at DATA with `code`. */
  refuseNextMessages(count: number, code: number): void;
  /** Waits until `predicate` holds for the messages (polling), or throws after `timeoutMs`. */
  waitFor(predicate: (messages: SmtpSink["messages"]) => boolean, timeoutMs?: number): Promise<void>;
  /** Stops listening and drops open connections (clients then fail to connect). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: SmtpSink["messages"] = [];
  const refusedRecipients = new Map<string, number>();
  let refuseMessages: { count: number; code: number } = { count: 0, code: 421 };
  let server: SMTPServer | undefined;
  let port = 0;

  const create = () =>
    new SMTPServer({
      logger: false,
      secure: false,
      disabledCommands: ["STARTTLS"],
      // Pooled clients keep idle connections: close them at once on stop().
      closeTimeout: 50,
      authOptional: true,
      allowInsecureAuth: true,
      onAuth(_auth, _session, callback) {
        callback(null, { user: "test" });
      },
      onRcptTo(address, _session, callback) {
        const code = refusedRecipients.get(address.address.toLowerCase());
        if (code !== undefined) return callback(smtpError(code, code >= 500 ? "mailbox unavailable" : "try again later"));
        callback();
      },
      onData(stream, session, callback) {
        if (refuseMessages.count > 0) {
          refuseMessages = { ...refuseMessages, count: refuseMessages.count - 1 };
          stream.resume();
          stream.on("end", () => callback(smtpError(refuseMessages.code, "service not available, try again later")));
          return;
        }
        simpleParser(stream)
          .then((mail) => {
            messages.push({ envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()), mail });
            callback();
          })
          .catch((error: Error) => callback(error));
      },
    });

  const listen = async () => {
    server = create();
    const listening = server;
    await new Promise<void>((resolve, reject) => {
      listening.once("error", reject);
      listening.listen(port, "127.0.0.1", () => resolve());
    });
    listening.on("error", () => {});
    port = (listening.server.address() as AddressInfo).port;
  };

  const stop = async () => {
    const current = server;
    server = undefined;
    if (current) await new Promise<void>((resolve) => current.close(() => resolve()));
  };

  await listen();
  return {
    get url() {
      return `smtp://user:secret@127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    messages,
    to: (address) => messages.filter((message) => message.envelopeTo.includes(address.toLowerCase())).map((message) => message.mail),
    refuseRecipient(address, code) {
      if (code === undefined) refusedRecipients.delete(address.toLowerCase());
      else refusedRecipients.set(address.toLowerCase(), code);
    },
    refuseNextMessages(count, code) {
      refuseMessages = { count, code };
    },
    async waitFor(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(messages)) {
        if (Date.now() > deadline) throw new Error(`smtp sink: condition not met within ${timeoutMs} ms (${messages.length} messages)`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stop,
    restart: listen,
    close: stop,
  };
}
