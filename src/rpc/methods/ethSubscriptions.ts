// eth_subscribe and eth_unsubscribe: subscriptions live on the request's connection (a WebSocket);
// over HTTP there is none, and both answer geth's "notifications not supported".
import type { NamespaceHandlers } from "../../../generated/methods.js";
import type { LogSubscriptionFilter } from "../../../generated/types.js";
import type { RpcCallContext } from "../dispatch.js";
import { invalidParamsError, notificationsNotSupportedError, tooManySubscriptionsError } from "../errors.js";
import { TooManySubscriptionsError, type SubscriptionRequest, type SubscriptionScope } from "../subscriptions.js";
import { matcherOf } from "./ethFilters.js";

function scopeOf(context: RpcCallContext): SubscriptionScope {
  if (context.subscriptions === undefined) throw notificationsNotSupportedError;
  return context.subscriptions;
}

export function createEthSubscriptionHandlers(): Pick<NamespaceHandlers<"eth", RpcCallContext>, "eth_subscribe" | "eth_unsubscribe"> {
  return {
    eth_subscribe: ([kind, options], context) => {
      const scope = scopeOf(context);
      let request: SubscriptionRequest;
      switch (kind) {
        case "logs":
          if (typeof options === "boolean") throw invalidParamsError("logs subscriptions take a filter object (address, topics), not a boolean");
          request = { kind, matcher: matcherOf((options ?? {}) as LogSubscriptionFilter) };
          break;
        case "newPendingTransactions":
          if (options !== undefined && typeof options !== "boolean") throw invalidParamsError("newPendingTransactions takes true (whole transactions) or false (hashes)");
          request = { kind, fullTransactions: options === true };
          break;
        default:
          if (options !== undefined) throw invalidParamsError(`${kind} subscriptions take no options`);
          request = { kind };
      }
      try {
        return scope.subscribe(request);
      } catch (error) {
        if (error instanceof TooManySubscriptionsError) throw tooManySubscriptionsError(error.message);
        throw error;
      }
    },
    eth_unsubscribe: ([subscriptionId], context) => scopeOf(context).unsubscribe(subscriptionId),
  };
}
