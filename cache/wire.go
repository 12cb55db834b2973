package cache

import "github.com/google/wire"

// ProviderSet builds the typed caches and the broadcaster that keeps their in-process tiers coherent
// across instances.
var ProviderSet = wire.NewSet(NewUserCache, NewArticleCache, NewTagsCache, NewListPageCache, NewCounters, NewAuthorPageCache, NewLocker, NewCodeStore, NewRateLimiter,
	NewRevocations, NewBreaker, NewHotListCache, NewBroadcaster, NewViewerState, NewSearchCache)
