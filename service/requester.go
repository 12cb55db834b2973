package service

import "context"

// requesterKey carries the requesting client's address (its IP, as the HTTP layer trusts it)
// from the HTTP layer to the code budgets.
type requesterKey struct{}

// WithRequester returns ctx naming the client that makes the request. Code budgets an attacker
// could spend for everyone are kept per requester and target (the daily send cap of one-time
// codes, the wrong guesses of an account code), so what one client spends never locks out the
// owner elsewhere.
func WithRequester(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, requesterKey{}, client)
}

// requesterOf is the client WithRequester named; "" (one shared budget) when none was.
func requesterOf(ctx context.Context) string {
	client, _ := ctx.Value(requesterKey{}).(string)
	return client
}
