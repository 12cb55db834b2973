package cache

import "github.com/google/wire"

// ProviderSet builds the typed caches.
var ProviderSet = wire.NewSet(NewUserCache, NewArticleCache, NewTagsCache, NewCounters, NewAuthorPageCache, NewLocker, NewCodeStore, NewRateLimiter,
	NewRevocations, NewBreaker, NewHotListCache)
