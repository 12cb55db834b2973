package cache

import "github.com/google/wire"

// ProviderSet builds the typed caches, the broadcaster that keeps their in-process tiers coherent
// across instances and the repairer that writes their failed invalidations again.
var ProviderSet = wire.NewSet(NewUserCache, NewArticleCache, NewTagsCache, NewListPageCache, NewCounters, NewAuthorPageCache, NewLocker, NewCodeStore, NewRateLimiter,
	NewRevocations, NewBreaker, NewHotListCache, NewBroadcaster, NewViewerState, NewSearchCache, NewRepairer, NewBlocks, NewChanges)
