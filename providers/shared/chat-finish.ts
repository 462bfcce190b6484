import type { ChatFinish } from '../../src/contracts/chat.ts';
import { invalidResponseError } from '../../src/runtime/http.ts';

/**
 * Follows a streamed chat reply to tell how it ended. A 200 whose body holds no event at all (an HTML page from
 * a proxy, a JSON body where a stream was asked for) is no answer: `PROVIDER_RESPONSE_INVALID`, never an empty
 * reply. A stream that stops before its end event, or ends on the token limit, is reported truncated through
 * `onFinish`, so the caller can flag the answer instead of passing it off as whole.
 */
export class StreamFinish {
  #events = 0;
  #reason: string | undefined;

  constructor(
    private readonly provider: string,
    private readonly onFinish: ((finish: ChatFinish) => void) | undefined,
  ) {}

  /** Count one event of the stream. */
  event(): void {
    this.#events++;
  }

  /** Record the finish reason the provider sent, in Axon's words (`stop`, `length`, `content_filter`, …). */
  finished(reason: string): void {
    this.#reason = reason;
  }

  /** The stream ended without an error: check it said something, and report how it ended. */
  end(): void {
    if (this.#events === 0) {
      const problem = 'the reply to a streamed request holds no events (an HTML page, a JSON body or nothing, where an event stream was expected).';
      throw invalidResponseError(this.provider, 200, problem);
    }
    const reason = this.#reason ?? 'incomplete';
    this.onFinish?.({ reason, truncated: reason === 'length' || reason === 'incomplete' || reason === 'content_filter' });
  }
}
