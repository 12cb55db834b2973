package seed

import "strings"

// seedWords are the seed's English words, commonest first (roughly: function words, then everyday
// words, then the vocabulary of the blog posts a platform like this one hosts), so a Zipf
// sample over their ranks gives bodies the skew of real text: a handful of words in nearly every
// article, most in few. Written for inkwell; any resemblance to a published frequency list is the
// language's.
var seedWords = strings.Fields(`
the of and to a in is it you that he was for on are with as his they be at one have this from or had
by not word but what some we can out other were all there when up use your how said an each she
which do their time if will way about many then them write would like so these her long make thing
see him two has look more day could go come did number sound no most people my over know water than
call first who may down side been now find any new work part take get place made live where after
back little only round man year came show every good me give our under name very through just form
sentence great think say help low line differ turn cause much mean before move right boy old too
same tell does set three want air well also play small end put home read hand port large spell add
even land here must big high such follow act why ask men change went light kind off need house
picture try us again animal point mother world near build self earth father head stand own page
should country found answer school grow study still learn plant cover food sun four between state
keep eye never last let thought city tree cross farm hard start might story saw far sea draw left
late run while press close night real life few north open seem together next white children begin
got walk example ease paper group always music those both mark often letter until mile river car
feet care second book carry took science eat room friend began idea fish mountain stop once base
hear horse cut sure watch color face wood main enough plain girl usual young ready above ever red
list though feel talk bird soon body dog family direct pose leave song measure door product black
short numeral class wind question happen complete ship area half rock order fire south problem piece
told knew pass since top whole king space heard best hour better true during hundred five remember
step early hold west ground interest reach fast verb sing listen six table travel less morning ten
simple several vowel toward war lay against pattern slow center love person money serve appear road
map rain rule govern pull cold notice voice unit power town fine certain fly fall lead cry dark
machine note wait plan figure star box noun field rest correct able pound done beauty drive stood
contain front teach week final gave green quick develop ocean warm free minute strong special mind
behind clear tail produce fact street inch multiply nothing course stay wheel full force blue object
decide surface deep moon island foot system busy test record boat common gold possible plane stead
dry wonder laugh thousand ago ran check game shape equate miss brought heat snow tire bring yes
distant fill east paint language among grand ball yet wave drop heart present heavy dance engine
position arm wide sail material size vary settle speak weight general ice matter circle pair include
divide syllable felt perhaps pick sudden count square reason length represent art subject region
energy hunt probable bed brother egg ride cell believe fraction forest sit race window store summer
train sleep prove lone exercise wall catch mount wish sky board joy winter sat written wild
instrument kept glass grass cow job edge sign visit past soft fun bright gas weather month million
bear finish happy hope flower clothe strange gone jump baby eight village meet root buy raise solve
metal whether push seven paragraph third shall held hair describe cook floor either result burn hill
safe cat century consider type law bit coast copy phrase silent tall sand soil roll temperature
finger industry value fight lie beat excite natural view sense ear else quite broke case middle kill
son lake moment scale loud spring observe child straight consonant nation dictionary milk speed
method organ pay age section dress cloud surprise quiet stone tiny climb cool design poor lot
experiment bottom key iron single stick flat twenty skin smile crease hole trade melody trip office
receive row mouth exact symbol die least trouble shout except wrote seed tone join suggest clean
break lady yard rise bad blow oil blood touch grew cent mix team wire cost lost brown wear garden
equal sent choose fell fit flow fair bank collect save control decimal gentle woman captain practice
separate difficult doctor please protect noon whose locate ring character insect caught period
indicate radio spoke atom human history effect electric expect crop modern element hit student
corner party supply bone rail imagine provide agree thus capital chair danger fruit rich thick
soldier process operate guess necessary sharp wing create neighbor wash bat rather crowd corn
compare poem string bell depend meat rub tube famous dollar stream fear sight thin triangle planet
hurry chief colony clock mine tie enter major fresh search send yellow gun allow print dead spot
desert suit current lift rose continue block chart hat sell success company subtract event
particular deal swim term opposite wife shoe shoulder spread arrange camp invent cotton born
determine quart nine truck noise level chance gather shop stretch throw shine property column
molecule select wrong gray repeat require broad prepare salt nose plural anger claim continent
oxygen sugar death pretty skill women season solution magnet silver thank branch match suffix
especially fig afraid huge sister steel discuss forward similar guide experience score apple bought
led pitch coat mass card band rope slip win dream evening condition feed tool total basic smell
valley nor double seat arrive master track parent shore division sheet substance favor connect post
spend chord fat glad original share station dad bread charge proper bar offer segment slave duck
instant market degree populate chick dear enemy reply drink occur support speech nature range steam
motion path liquid log meant quotient teeth shell neck dragon cache database server client network
request response query index schema migration transaction commit rollback lock thread memory disk
storage backup replica cluster shard partition queue message worker scheduler timer latency
throughput bandwidth error failure retry timeout deadline budget metric counter gauge histogram
trace span alert dashboard incident outage deploy release version compile debug profile benchmark
optimize refactor review merge repository module package library framework compiler interpreter
runtime garbage pointer reference variable constant function interface struct instance inheritance
composition factory builder adapter proxy facade observer strategy command iterator visitor template
singleton prototype decorator bridge flyweight mediator memento chain responsibility parser lexer
token grammar syntax semantic generic closure lambda callback promise future async await channel
goroutine mutex semaphore barrier atomic volatile fence cursor offset limit filter sort union insert
update delete alter grant revoke role user account session password secret certificate signature
hash encrypt decrypt cipher random entropy nonce vector matrix graph node vertex cycle heap stack
array slice bloom trie bitmap hyperloglog sketch sample estimate average median percentile variance
deviation distribution normal uniform exponential poisson binomial zipf outlier anomaly signal
kernel frame buffer packet socket address host domain route gateway firewall balancer cdn origin
eviction expiry ttl hot document series ranking relevance boost frequency inverse corpus lexicon
stem fuzzy typo suggestion autocomplete prefix infix wildcard regex highlight snippet fragment
excerpt article author reader writer editor comment favorite timeline notification inbox draft
publish withdraw archive tag category topic title description content markdown image video audio
link bookmark collection folder trending popular recent stale rank hotlist leaderboard badge reward
streak goal habit task project milestone sprint backlog ticket issue bug feature customer price
revenue profit growth churn retention funnel conversion campaign brand chapter novel essay journal
diary blog forum chat community member castle kingdom knight princess wizard witch giant goblin
troll elf dwarf treasure sword shield armor quest journey adventure battle siege tower gate cave
storm thunder lightning rainbow sunrise sunset twilight midnight dawn dusk shadow flame ember ash
smoke mist fog autumn harvest leaf blossom petal thorn vine moss fern mushroom berry nut wolf fox
deer rabbit squirrel owl eagle hawk raven crow sparrow robin swan goose heron crane salmon trout
whale dolphin shark octopus turtle frog snake lizard spider beetle butterfly moth bee wasp ant worm
snail coffee tea butter cheese honey jam soup salad pasta rice noodle pizza burger sandwich cake
cookie pie chocolate vanilla cinnamon pepper garlic onion tomato potato carrot lettuce cabbage bean
pea banana orange lemon lime grape cherry peach pear plum mango melon kitchen recipe oven stove pan
pot knife fork spoon plate bowl cup mug bottle jar basket bag crate barrel bucket ladder hammer nail
screw drill gear lever pulley motor battery cable plug switch lamp bulb candle torch lantern mirror
curtain carpet pillow blanket mattress couch sofa bench stool desk shelf cabinet drawer closet
wardrobe hanger jacket sweater shirt trouser skirt sock boot sandal cap scarf glove necklace
bracelet earring wallet purse umbrella passport luggage suitcase airport harbor highway tunnel
avenue alley plaza museum theater cinema stadium hospital clinic pharmacy bakery butcher grocer
florist tailor barber cafe restaurant hotel motel inn cottage cabin farmhouse mansion palace temple
church chapel cathedral monastery lighthouse windmill barn stable garage shed workshop warehouse
studio gallery classroom campus university college academy teacher professor scholar pupil lesson
lecture seminar exam grade diploma thesis research theory hypothesis evidence proof argument logic
truth belief doubt puzzle riddle mystery clue detective thief robber pirate smuggler spy agent
admiral sailor pilot driver rider runner swimmer climber hiker traveler explorer pioneer settler
farmer fisher hunter miner carpenter mason smith baker chef waiter nurse surgeon dentist lawyer
judge mayor governor senator president minister queen prince duke baron lord servant apprentice
guard watchman messenger herald poet painter sculptor musician singer dancer actor director producer
novelist journalist reporter photographer engineer architect scientist chemist physicist biologist
geologist astronomer mathematician economist historian philosopher psychologist sociologist linguist
programmer developer designer analyst manager leader founder owner sad angry calm brave shy proud
humble cruel fierce wise foolish clever stupid honest loyal curious eager patient lazy tired hungry
thirsty sleepy lonely jealous grateful anxious nervous excited bored beautiful ugly handsome elegant
fancy complex easy rough smooth dull dim ancient rotten dirty wet narrow shallow brief vast empty
cheap expensive weak healthy sick dangerous likely rare unknown public private local global urban
rural northern southern eastern western central inner outer upper lower rear inside outside below
beneath beside beyond within without across along around throughout despite unless although however
therefore moreover furthermore meanwhile otherwise nevertheless instead indeed maybe probably
certainly definitely surely clearly obviously simply really actually basically generally usually
sometimes rarely seldom already later today tomorrow yesterday tonight forever recently suddenly
finally quickly slowly carefully easily gladly sadly happily loudly quietly gently firmly briefly
nearly almost exactly accept achieve acquire adapt adjust admire admit adopt advance advise afford
announce apologize apply appoint approve argue arise arrest assume assure attach attack attempt
attend attract avoid award balance bathe behave belong bend bind bite bless boast boil borrow bounce
bow breathe breed brush bury calculate cancel capture carve celebrate challenge charm chase cheat
cheer chew collapse combine comfort communicate compete complain compose concentrate concern
conclude confess confirm confuse conquer consist construct consult consume convert convince
cooperate coordinate cope crash crawl criticize crush cure curl damage dare deceive declare decline
decorate defeat defend define delay deliver demand deny depart deposit deserve desire destroy detect
devote dig dine disappear discover dislike dismiss display dissolve distinguish disturb dive donate
drag drain drift drown earn educate elect eliminate embrace emerge emphasize employ enable encourage
endure enforce engage enhance enjoy ensure entertain escape establish evaluate evolve examine exceed
exchange excuse exhibit exist expand explain explode explore export expose express extend extract
fade fail fasten fetch finance fix flee float flood fold forbid forecast forgive freeze frighten
gain gaze generate glance glow grab greet grind guarantee handle hang harm hate heal hesitate hide
hire honor hug identify ignore illustrate imitate impress improve inform inherit inject injure
insist inspect inspire install intend interrupt introduce invest investigate invite involve isolate
justify kick kneel knit knock label lack launch lean leap lend license load maintain manage
manufacture marry melt mention migrate mislead modify monitor motivate murmur negotiate nod nominate
obey obtain occupy offend omit oppose organize overcome owe pack paste pause perceive perform permit
persuade pinch polish possess postpone pour praise pray predict prefer preserve pretend prevent
proceed promote pronounce propose prosper punish pursue qualify quote react realize recall recognize
recommend recover recruit reduce reflect refuse regard register regret reject relate relax rely
remain remind remove render rent repair replace report rescue resemble reserve resign resist resolve
respond restore restrict retain retire reveal reverse revise ruin rush satisfy scatter scold scratch
scream seek seize shake shave shelter shift shiver shrink sigh sink slide smash sneeze sniff soak
sow spare spill spin split squeeze stain stare steal steer sting stir strike strip struggle submit
succeed suffer suspect swallow swear sweep swing tackle tap tear tease tempt thrive tickle tolerate
toss transfer transform translate transport trap treat tremble trust twist undergo unite urge vanish
volunteer vote wander warn weave weep whisper whistle wipe wrap wrestle yawn yield ability absence
accident accuracy action activity addition administration advantage advice affair agency agenda
agreement airline alarm album alcohol alliance ambition amount analysis anniversary anxiety
apartment appeal appetite application appointment approach approval arena arrival aspect assembly
assessment asset assignment assistance association assumption atmosphere attention attitude audience
authority automation awareness background balcony bargain basis behavior benefit biography birthday
blessing boundary bracket breakfast breath brick bulletin bundle burden bureau calendar candidate
capacity career ceiling ceremony certainty champion charity chemistry childhood choice circuit
circumstance citizen civilization clarity climate coalition code coincidence colleague combination
comedy commerce commission commitment committee communication comparison competition complaint
component concept conclusion conference confidence conflict confusion congress connection
consequence conservation consistency constitution consultant consumer contact context contract
contribution convention conversation conviction core corporation council courage creature credit
crisis criterion culture curiosity currency curriculum debate decade decision declaration defense
deficit definition delight delivery democracy demonstration departure depression destination
destruction detail device diagnosis dialogue diamond difference dignity dilemma dimension dinner
disaster discipline discount discovery discussion disease dispute distance diversity donation drama
duty economy edition editorial education efficiency effort election elegance emergency emotion
emphasis empire employee employment encounter encouragement enterprise enthusiasm entrance
environment episode equipment essence estate ethics evaluation evolution examination exception
excitement exhibition existence expansion expectation expedition expense expert explanation
explosion exposure expression extension extent facility faculty faith fantasy fashion fatigue
feedback festival fiction flavor flight formula fortune foundation freedom friendship frontier fund
funeral furniture galaxy generation genius gesture glimpse glory government gratitude guidance guilt
habitat harmony headline heritage hierarchy hobby holiday horizon hospitality household humor hunger
identity illusion imagination impact implication importance impression improvement impulse incentive
income independence indication individual infection inflation influence information infrastructure
ingredient initiative injury innovation input insight inspection inspiration installation
institution instruction insurance integrity intelligence intensity intention interaction interval
interview introduction intuition invasion invention investment invitation isolation judgment justice
knowledge laboratory landscape laughter leadership legacy legend leisure liberty lifestyle
literature loyalty luxury magazine majority management manner manuscript margin marriage mechanism
medicine membership memorial mercy merit metaphor minority miracle mission mixture mobility moisture
momentum monument morality motivation movement multitude narrative necessity negotiation
neighborhood nightmare nonsense notion nutrition objective obligation observation obstacle occasion
occupation opinion opponent opportunity opposition optimism organization orientation outcome outline
output ownership panic paradise paradox parliament participation partnership passage passenger
passion patience payment peace penalty perception performance permission personality perspective
phenomenon philosophy physician pleasure poetry policy politics pollution popularity portion
portrait possession possibility poverty precision preference pregnancy preparation presence
preservation pressure prestige priority privacy privilege procedure proceeding production profession
progress prohibition projection promotion proportion proposal prosperity protection protest province
publication punishment purchase purpose qualification quality quantity quarter radiation reaction
reality reception recession recognition recommendation recovery reduction reflection reform refugee
regulation relation relationship relief religion reluctance remedy reputation requirement
reservation residence resistance resolution resource respect restriction retirement revolution
rhythm ritual rival romance routine safety salary satisfaction scandal scenario schedule scholarship
scope sculpture security selection sensation sentiment sequence settlement shortage significance
silence simplicity sincerity situation society solidarity sovereignty specialist specimen spectrum
speculation sphere spirit sponsor stability standard statement statistics status stimulus strength
structure suburb succession summary summit supplement surgery surplus survey survival suspicion
sympathy symptom talent target taxation technique technology television temptation tendency tension
territory testimony texture theme therapy threshold tolerance tournament tradition tragedy
transition transmission transparency treatment treaty tribute triumph trophy tutorial uncertainty
understanding universe urgency usage utility vacation validity variation variety vehicle venture
verdict victim victory violation violence virtue visibility vision vitamin vocabulary voyage
vulnerability warrant wealth welfare wilderness wisdom witness youth zone
`)

// seedChineseWords and seedJapaneseWords are common words of the CJK bodies (about 5% of seeded
// articles), written without spaces as those languages are, so search has to find 缓存 inside
// 缓存击穿.
var (
	seedChineseWords = strings.Fields(`
我们 你们 他们 自己 什么 这个 那个 时候 没有 知道 现在 可以 因为 所以 但是 如果 已经 还是 就是 一个
问题 工作 时间 中国 世界 国家 社会 经济 发展 历史 文化 生活 朋友 学生 老师 学校 大学 城市 地方 公司
市场 技术 系统 数据 服务 用户 网络 信息 软件 程序 代码 开发 测试 设计 产品 项目 管理 团队 需求 架构
缓存 击穿 雪崩 穿透 数据库 索引 查询 事务 分布式 集群 节点 负载 均衡 延迟 吞吐 并发 线程 进程 内存 磁盘
存储 备份 副本 分片 队列 消息 日志 监控 告警 故障 恢复 部署 发布 版本 配置 接口 协议 安全 加密 密码
账号 登录 注册 权限 角色 文章 作者 读者 评论 点赞 收藏 关注 推荐 排行 热榜 搜索 标签 分类 标题 内容
图片 视频 音乐 电影 新闻 故事 小说 诗歌 春天 夏天 秋天 冬天 早上 晚上 今天 明天 昨天 天气 山水 河流
大海 森林 花园 动物 植物 熊猫 老虎 龙王 飞龙 学习 研究 思考 理解 解决 方法 办法 经验 能力 机会 重要
简单 复杂 容易 困难 快速 稳定 可靠 高效 美丽 快乐 幸福 健康 家庭 父母 孩子 吃饭 喝茶 咖啡
`)
	seedJapaneseWords = strings.Fields(`
キャッシュ データ サーバー システム ネットワーク プログラム ソフトウェア エンジニア デザイン テスト ユーザー アカウント パスワード ログイン 検索 記事
作者 読者 評価 東京 大阪 日本 日本語 言語 文化 歴史 世界 時間 仕事 会社 学校 先生
学生 友達 家族 天気 桜 富士山 ドラゴン 物語 小説 音楽 映画 写真 料理 寿司 ラーメン お茶
こんにちは ありがとう よろしく すごい 楽しい 美しい 新しい 古い 大きい 小さい 速い 遅い
`)
)
