//go:build wireinject

package inkwell

import (
	"log/slog"

	"github.com/google/wire"
	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/auth"
	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/delivery"
	"github.com/inkwell-dev/inkwell/events"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/media"
	"github.com/inkwell-dev/inkwell/metrics"
	"github.com/inkwell-dev/inkwell/oidc"
	"github.com/inkwell-dev/inkwell/render"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/identities"
	"github.com/inkwell-dev/inkwell/repository/mediastore"
	"github.com/inkwell-dev/inkwell/repository/moderation"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/revisions"
	"github.com/inkwell-dev/inkwell/repository/search"
	"github.com/inkwell-dev/inkwell/repository/session"
	"github.com/inkwell-dev/inkwell/repository/uploads"
	"github.com/inkwell-dev/inkwell/repository/webhooks"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
)

// serviceSet lives here rather than in service/, which imports nothing but domain and the standard
// library.
var serviceSet = wire.NewSet(service.NewUserService, service.NewProfileService, service.NewArticleService, service.NewArticleScheduleService,
	service.NewCommentService, service.NewReadService, service.NewCollectionService, service.NewRankService,
	service.NewNotificationService, service.NewCodeLoginService, service.NewSessionService,
	service.NewAccountService, service.NewSearchService, service.NewPeopleSearchService, service.NewTagSearchService,
	service.NewAccountDeletion, service.NewIdempotencyRunner, service.NewModerationService, service.NewModerationStats,
	service.NewReportService, service.NewBlockService, service.NewUploadService, service.NewSitemapService, service.NewSignInService,
	service.NewFeedService, service.NewRevisionService)

// rootSet builds what this package adds: the App, its background workers and scheduled jobs, the
// metrics endpoint, the readiness check, and the settings each layer takes from the configuration
// (a provider takes the groups of ioc.Config it reads, or the tests' Tune).
var rootSet = wire.NewSet(
	wire.FieldsOf(new(*ioc.Config), "Server", "Redis", "Auth", "Search", "Jobs", "Uploads", "Tune"),
	NewApp, NewWorkers, NewDurable, NewReadStream, NewOutboxStream, NewQueuePgPool, NewSearchPgPool, NewSessionPgPool, NewScheduler,
	NewMetricsHandler, wire.Struct(new(MetricSources), "*"), NewReadiness, NewMediaStore, NewCodeGateway, NewRankLocker,
	NewRouterConfig, NewHasherConfig, NewJWTConfig, NewSessionConfig, NewIdempotencyWait, NewBreakerConfig, NewKeyspace,
	NewCachePolicy, NewFallbackLimit, NewCodePolicy, NewCodeKeys, NewCodeStore, repository.NewCodeFallback, NewSlugSuffix, NewPublisherConfig, NewAggregatorConfig, NewDeliveryConfig,
	NewRankConfig, NewHotListTTLs, NewRankJobConfig, NewRankJob, NewArticlePreloader, NewRevocationRenewer,
	NewRetentionConfig, NewRetentionJob, NewRetentionStore, NewUploadConfig, NewPublicLinks,
	NewSearchLanguage, NewSearchBackfill, NewEmailRecheck,
	job.NewLexiconJob, NewIdentityProviders, NewSignInConfig, NewSignInCookieConfig,
	NewReadRouter, NewWriteRecorder, NewSearchReplicas,
)

// appSet is every layer plus the bindings that say which adapter implements each port.
var appSet = wire.NewSet(
	ioc.ProviderSet, rootSet, notificationStreamSet, cache.ProviderSet, repository.ProviderSet, durable.ProviderSet, search.ProviderSet, session.ProviderSet, identities.ProviderSet, moderation.ProviderSet, uploads.ProviderSet, revisions.ProviderSet, webhookSet, serviceSet, web.ProviderSet,
	auth.ProviderSet, events.ProviderSet, delivery.ProviderSet, metrics.ProviderSet, media.ProviderSet,
	wire.Bind(new(service.ImageProcessor), new(*media.Processor)),
	render.ProviderSet,
	wire.Bind(new(service.MarkdownRenderer), new(*render.Renderer)),
	wire.Bind(new(cache.BodyRenderer), new(*render.Renderer)),
	wire.Bind(new(web.ContentChanges), new(*cache.Changes)),
	wire.Bind(new(redis.Hook), new(*cache.Breaker)),
	wire.Bind(new(service.UploadLookup), new(*repository.UploadReferences)),
	wire.Bind(new(service.AvatarUploads), new(*repository.UploadReferences)),
	wire.Bind(new(service.ModeratedArticles), new(*repository.ArticleRepository)),
	wire.Bind(new(service.ModeratedComments), new(*repository.CommentRepository)),
	wire.Bind(new(service.ModeratedAccounts), new(*repository.UserRepository)),
	wire.Bind(new(service.ModerationRecorder), new(*moderation.Log)),
	wire.Bind(new(service.CaseResolver), new(*moderation.Cases)),
	wire.Bind(new(service.ReportStore), new(*moderation.Reports)),
	wire.Bind(new(service.ReportCases), new(*moderation.Cases)),
	wire.Bind(new(service.ReportLog), new(*moderation.Log)),
	wire.Bind(new(service.TargetHider), new(*service.ModerationService)),
	wire.Bind(new(web.ReportService), new(*service.ReportService)),
	wire.Bind(new(service.JobScheduler), new(*durable.JobQueue)),
	wire.Bind(new(web.ModerationService), new(*service.ModerationService)),
	wire.Bind(new(job.Ranker), new(*service.RankService)),
	wire.Bind(new(job.RetentionStore), new(*RetentionStore)),
	wire.Bind(new(job.LexiconFolder), new(*search.Lexicon)),
	wire.Bind(new(service.UserSearcher), new(*search.People)),
	wire.Bind(new(service.TagSearcher), new(*search.Tags)),
	wire.Bind(new(web.PeopleSearchService), new(*service.PeopleSearchService)),
	wire.Bind(new(web.TagSearchService), new(*service.TagSearchService)),
	wire.Bind(new(service.UserRepository), new(*repository.UserRepository)),
	wire.Bind(new(service.FollowRepository), new(*repository.FollowRepository)),
	wire.Bind(new(service.PasswordHasher), new(*auth.Argon2Hasher)),
	wire.Bind(new(service.TokenManager), new(*auth.JWTManager)),
	wire.Bind(new(web.UserService), new(*service.UserService)),
	wire.Bind(new(web.ProfileService), new(*service.ProfileService)),
	wire.Bind(new(service.ArticleRepository), new(*repository.ArticleRepository)),
	wire.Bind(new(service.InteractiveRepository), new(*repository.InteractiveRepository)),
	wire.Bind(new(service.CommentRepository), new(*repository.CommentRepository)),
	wire.Bind(new(web.ArticleService), new(*service.ArticleService)),
	wire.Bind(new(web.ArticleScheduler), new(*service.ArticleScheduleService)),
	wire.Bind(new(service.ArticleScheduleStore), new(*repository.ArticleRepository)),
	wire.Bind(new(web.CommentService), new(*service.CommentService)),
	wire.Bind(new(service.ReadRepository), new(*repository.ReadRepository)),
	wire.Bind(new(service.CollectionRepository), new(*repository.CollectionRepository)),
	wire.Bind(new(service.ReadRecorder), new(*events.ReadAggregator)),
	wire.Bind(new(service.ArticlePreloader), new(*job.Preloader)),
	wire.Bind(new(web.CollectionService), new(*service.CollectionService)),
	wire.Bind(new(web.HistoryService), new(*service.ReadService)),
	wire.Bind(new(service.RankSource), new(*repository.RankRepository)),
	wire.Bind(new(service.HotListStore), new(*cache.HotListCache)),
	wire.Bind(new(service.HotListArchive), new(*repository.HotArticleStore)),
	wire.Bind(new(web.HotService), new(*service.RankService)),
	wire.Bind(new(service.NotificationRepository), new(*repository.NotificationRepository)),
	wire.Bind(new(service.CodeStore), new(*service.FallbackCodeStore)),
	wire.Bind(new(service.JobEnqueuer), new(*durable.JobQueue)),
	wire.Bind(new(service.CodeAccounts), new(*repository.UserRepository)),
	wire.Bind(new(web.NotificationService), new(*service.NotificationService)),
	wire.Bind(new(repository.NotificationPublisher), new(*cache.NotificationHub)),
	wire.Bind(new(moderation.NoticePublisher), new(*cache.NotificationHub)),
	wire.Bind(new(service.NotificationSignals), new(*cache.NotificationHub)),
	wire.Bind(new(service.NotificationStreamRepository), new(*repository.NotificationRepository)),
	wire.Bind(new(service.StreamSessions), new(*service.SessionService)),
	wire.Bind(new(web.NotificationStreamService), new(*service.NotificationStreamService)),
	wire.Bind(new(web.CodeLoginService), new(*service.CodeLoginService)),
	wire.Bind(new(web.AccountService), new(*service.AccountService)),
	wire.Bind(new(service.AccountCodeRepository), new(*repository.UserRepository)),
	wire.Bind(new(service.RevocationRecorder), new(*service.SessionService)),
	wire.Bind(new(service.EmailClaims), new(*service.AccountService)),
	wire.Bind(new(service.RegistrationVerifier), new(*service.AccountService)),
	wire.Bind(new(service.StepUpCodes), new(*service.CodeLoginService)),
	wire.Bind(new(service.SessionRepository), new(*session.SessionRepository)),
	wire.Bind(new(service.RevocationCache), new(*cache.Revocations)),
	wire.Bind(new(service.APIKeyRepository), new(*session.APIKeyRepository)),
	wire.Bind(new(service.SessionManager), new(*service.SessionService)),
	wire.Bind(new(web.SessionService), new(*service.SessionService)),
	wire.Bind(new(service.IdempotencyStore), new(*durable.IdempotencyStore)),
	wire.Bind(new(service.Idempotency), new(*service.IdempotencyRunner)),
	wire.Bind(new(service.UnitOfWork), new(*pg.UnitOfWork)),
	wire.Bind(new(web.RateLimiter), new(*cache.RateLimiter)),
	wire.Bind(new(web.RequestObserver), new(*metrics.Registry)),
	wire.Bind(new(job.JobObserver), new(*metrics.Registry)),
	wire.Bind(new(web.ReadinessChecker), new(*Readiness)),
	wire.Bind(new(service.MediaStore), new(*mediastore.Store)),
	wire.Bind(new(web.MediaFiles), new(*mediastore.Store)),
	wire.Bind(new(service.SearchRepository), new(*search.Repository)),
	wire.Bind(new(service.Suggester), new(*search.Lexicon)),
	wire.Bind(new(search.ArticleReader), new(*repository.ArticleRepository)),
	wire.Bind(new(web.SearchService), new(*service.SearchService)),
	wire.Bind(new(service.AccountStore), new(*repository.AccountEraser)),
	wire.Bind(new(service.SessionEnder), new(*service.SessionService)),
	wire.Bind(new(service.BlockRepository), new(*moderation.Blocks)),
	wire.Bind(new(service.BlockedSets), new(*moderation.Blocks)),
	wire.Bind(new(service.FollowEnder), new(*repository.FollowRepository)),
	wire.Bind(new(web.BlockService), new(*service.BlockService)),
	wire.Bind(new(service.UploadStore), new(*uploads.Store)),
	wire.Bind(new(web.UploadService), new(*service.UploadService)),
	wire.Bind(new(service.SitemapStore), new(*repository.SitemapRepository)),
	wire.Bind(new(web.SitemapService), new(*service.SitemapService)),
	wire.Bind(new(service.IdentityProviders), new(*oidc.Set)),
	wire.Bind(new(service.SignInStore), new(*identities.Store)),
	wire.Bind(new(service.IdentityStore), new(*identities.Store)),
	wire.Bind(new(service.SignInMail), new(*durable.JobQueue)),
	wire.Bind(new(service.AccountStepUp), new(*service.UserService)),
	wire.Bind(new(web.SignInService), new(*service.SignInService)),
	wire.Bind(new(service.FeedArticles), new(*repository.ArticleRepository)),
	wire.Bind(new(service.FeedUsers), new(*repository.UserRepository)),
	wire.Bind(new(web.FeedService), new(*service.FeedService)),
	wire.Bind(new(service.RevisionStore), new(*revisions.Store)),
	wire.Bind(new(service.ArticleEditor), new(*service.ArticleService)),
	wire.Bind(new(web.RevisionService), new(*service.RevisionService)),
	wire.Bind(new(service.WebhookAccounts), new(*repository.UserRepository)),
	wire.Bind(new(webhooks.Jobs), new(*durable.JobQueue)),
)

// InitApp wires the whole process from its configuration.
func InitApp(cfg *ioc.Config, log *slog.Logger) (*App, func(), error) {
	wire.Build(appSet)
	return nil, nil, nil
}
