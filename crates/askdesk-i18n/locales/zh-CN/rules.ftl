# 回答规则自己的用语，供命令行、桌面应用和日志共用：规则做什么，以及规则有何风险。
# 规则的名称、回答和消息保持规则文件中的原文。

## 规则做什么

rules-action-answer = 回答 { $label }
rules-action-recommended = 回答推荐的选项
rules-action-text = 以文字 { $text } 回答
rules-action-ask = 询问你
rules-verdict-deny = 拒绝（{ $message }）
rules-verdict-dismiss = 驳回（{ $message }）

## 加载的规则有何风险

rules-warning-empty-match = 规则 { $name }（第 { $line } 行）的匹配条件为空：它会回答所有符合的请求，不论来自哪个代理、哪个项目（权限提示和计划审阅除外）；请为它加上 `match`
rules-broad-allow = 它也会允许这些程序自己运行的一切：由解释器或构建工具运行的文件（`python3 x.py`、`make`、`npm test`）、从文件或输入读取的代码，以及会运行代码的选项（`awk` 的 `system()`、`sed` 的 `e`、仓库自带的 git 钩子、别名和过滤器）；askdesk 只拒绝它所知道的包装命令、内联代码和 git 设置
rules-warning-broad-allow = 规则 { $name }（第 { $line } 行）宽泛地允许命令：{ rules-broad-allow }

## 为什么不能根据回答起草规则（“制定规则”）

rules-draft-no-question = 没有可以据以制定规则的问题
rules-draft-plan = 计划审阅不会被制成规则：规则看不到计划，所以它会以同样的方式决定这个项目的每一份计划
rules-draft-same = 规则 { $name }（第 { $line } 行）已经在这里这样回答了
rules-draft-shadowed = 规则 { $name }（第 { $line } 行）已经决定了这个请求，排在它之后的规则永远不会生效：请修改那条规则，或在“规则”视图中关闭它
rules-draft-no-cwd = 代理没有说明它在哪个项目中工作（没有绝对路径的 `cwd`），所以规则没有“这里”可言
rules-draft-standing = { $label } 会授予本次会话剩余时间内的长期许可，而规则一次只回答一个调用：回答 { $once } 才能据此制定规则
rules-draft-prompt-exact = 权限提示的规则要写明确切的命令、文件或地址：更宽泛的规则会允许你没看到的内容，所以请手动编写
rules-draft-no-agent = 这个问题不是来自有名称的代理，所以规则没有“这个代理”可言
rules-draft-no-header = 这个问题没有标题
rules-draft-headers-differ = 这些问题没有共同的标题
rules-draft-nothing-varies = 问题中没有可变的部分（没有数字或名称），所以类似的问题就只有这个问题本身
rules-draft-file-unsure = 无法确定地解析文件 { $file }（没有代理文件夹的相对路径、指向不存在之处的链接、无法读取的文件夹），或者它是任何规则都不得允许修改的文件，所以不为它制定规则
rules-draft-not-http = { $url } 不是普通的 http 或 https 地址，所以不为它制定规则
rules-draft-nothing-to-narrow = 这个 { $tool } 提示没有指明可以用来限定规则的命令、文件或网址，而针对所有 { $tool } 调用的规则会全部回答它们：请每次自己回答，或手动编写规则
rules-draft-unanswered = 回答中没有 { $question } 的内容，而规则会回答每一个问题
rules-draft-skipped = 跳过的问题无法由规则跳过：规则会回答每一个问题
rules-draft-several = 一个问题中的多个选择（或选择加输入的文字）无法由一条规则给出：规则只能选一个选项或输入一段文字
rules-draft-different = 这些问题得到了不同的回答，而一条规则会给每个问题相同的回答
rules-draft-cannot = 无法起草出给出这个回答的规则（{ $why }）
rules-draft-would-not-answer = 这条规则不会回答这个请求
rules-draft-would-differ = 这条规则的回答会不同

## 为什么无法暂停或恢复规则的期限

rules-hold-no-deadline = 这个请求上已没有正在计时的规则期限：它已被回答，或者它的规则已经执行或已更改

## 规则文件的错误（文件的键名保持原样）

rules-error-where = 第 { $line } 行，第 { $column } 列：{ $message }
rules-error-read = 无法读取 { $path }：{ $error }
rules-error-no-config-dir = 没有配置目录：请设置 XDG_CONFIG_HOME 或 HOME
rules-error-refused = { $path }：{ $message }；文件未改动
rules-error-write = 无法写入 { $path }：{ $error }；文件未改动
rules-error-not-utf8 = 它不是 UTF-8 文本（第一个错误字节位于偏移 { $offset }）
rules-error-duplicate = 名为 { $name } 的规则已在第 { $first } 行定义
rules-error-answer-form = `answer` 是一个选项的标签（"Yes"）或一个表：{"{"} option = "<label>" {"}"}、{"{"} recommended = true {"}"} 或 {"{"} text = "..." {"}"}
rules-error-ask-false = `ask = false` 没有意义：把它去掉
rules-error-no-action = 规则 { $name } 没有动作：请给出 `answer`、`deny`、`dismiss`、`ask` 之一
rules-error-two-actions = 规则 { $name } 有不止一个动作：只能给出 `answer`、`deny`、`dismiss`、`ask` 之一
rules-error-after-ask = `after` 与 `ask = true` 同用没有意义：无论如何都会询问你
rules-error-command-needs-tool = `match.command` 需要 `match.tool`：请写明由哪个工具运行该命令
rules-error-cwd-absolute = `match.cwd` 必须是绝对路径，而不是 { $cwd }
rules-error-url-path-needs-host = `match.url_path` 需要 `match.host`：请写明该路径在哪个网站上
rules-error-not-host = `match.host` { $host } 不是主机名
rules-error-path-absolute = `match.{ $field }` 必须以 `/` 或 `*` 开头，而不是 { $glob }：它要与绝对路径匹配
rules-error-path-dots = `match.{ $field }` { $glob } 含有 `.` 或 `..`：路径按解析后的形式匹配，请直接写出该位置
rules-error-host-empty = `match.host` 不能为空
rules-error-host-only = `match.host` 只能是主机名（"docs.rs"、"*.github.com"），而不是 { $host }
rules-error-intent-empty = `match.intent` 不能为空
rules-error-intent-typo = `match.intent` { $kind } 不是代理会发送的类型：你是想写 { $known } 吗？
rules-error-recommended-false = `answer.recommended = false` 没有意义：请改为指定一个选项
rules-error-answer-one = `answer` 只能取 `option = "<label>"`、`recommended = true`、`text = "..."` 中的一个
rules-error-empty = `{ $field }` 不能为空
rules-error-after-zero = `after` 必须大于零：要立即执行就把它去掉
rules-error-after-long = `after` 最多为 7d，而不是 { $text }：等得更久的规则就不算期限了
rules-error-duration = { $text } 不是时长：请写成 "30s"、"10m" 或 "1h30m" 这样的形式
rules-error-question-regex = `match.question` 不是正则表达式：{ $detail }
rules-error-glob-long = 含 `*` 或 `?` 的通配符最多 { $limit } 个字符，而不是 { $length } 个
rules-error-standing = 规则 { $rule } 回答 { $label }，这是本次会话剩余时间内的长期许可，覆盖的范围超出规则所匹配的，而且它覆盖的调用再也不会到达 askdesk：请回答 { $once }（规则随后会逐个回答它匹配的调用）

## 为什么没有添加或切换规则（文件未改动）

rules-edit-new-invalid = 新规则无效：{ $error }
rules-edit-not-one = 新规则文本必须恰好包含一个 [[rule]]，而不是 { $count } 个
rules-edit-not-table = 新规则必须写成 [[rule]] 表
rules-edit-name-taken = 名为 { $name } 的规则已存在（第 { $line } 行）：请换一个名称
rules-edit-inline-array = 其中的规则写成了内联数组（`rule = [...]`），后面无法接 [[rule]]：请手动添加规则
rules-edit-would-not-load = 加上新规则后文件将无法加载：{ $error }
rules-edit-no-file = 没有规则文件
rules-edit-not-toml = 它不是 TOML：{ $error }
rules-edit-not-tables = 其中的规则没有写成 [[rule]] 表：请手动更改模式
rules-edit-no-rule = 没有名为 { $name } 的规则
rules-edit-mode-not-string = 规则 { $name } 的 `mode` 不是字符串
rules-edit-mode-would-not-load = 换成新模式后文件将无法加载：{ $error }
rules-edit-does-not-load = 它无法加载（{ $error }）：请先修正，再重试

## 为什么规则从不回答某条命令：不运行它就无法读懂

rules-escape-unparseable = 它无法解析为 shell 命令行
rules-escape-character = 它含有控制字符、不可见字符或未加引号的非 ASCII 字符
rules-escape-substitution = 它替换了某个命令的输出
rules-escape-expansion = 它的某个词在运行时才展开
rules-escape-assignment = 它设置了变量
rules-escape-redirection = 它重定向到文件或从文件重定向
rules-escape-background = 它在后台运行命令
rules-escape-construct = 它使用了复合或不常见的 shell 结构
rules-escape-program = 它运行的程序会运行其他命令或代码
rules-escape-subscript = 它给内建命令传了带下标的变量名
rules-escape-config = 它设置了会运行程序的 git 配置

## 为什么任何规则都不得允许修改某个位置：谁读取它，修改它可能让什么运行或被信任

rules-place-askdesk-config = askdesk：规则文件和设置
rules-place-askdesk-data = askdesk：规则和记忆所回放的历史日志
rules-place-claude-code = Claude Code：settings.json（钩子、权限、MCP 服务器）、命令、代理
rules-place-claude-state = Claude Code：MCP 服务器和每个项目的信任
rules-place-claude-mcp = Claude Code：项目的 MCP 服务器，以命令方式启动
rules-place-claude-managed = Claude Code：托管设置（钩子、权限）
rules-place-codex = Codex：config.toml（MCP 服务器、通知命令）、hooks.json
rules-place-codex-managed = Codex：托管配置和要求
rules-place-gemini = Gemini CLI：settings.json（MCP 服务器、钩子、工具命令）
rules-place-gemini-system = Gemini CLI：系统设置和系统默认值
rules-place-git-dir = git：钩子、配置（core.hooksPath、core.fsmonitor、core.pager、过滤器）、info/attributes、子模块和工作树的 git 文件夹
rules-place-git-config = git：全局配置（别名、core.pager、过滤器、hooksPath）
rules-place-git-xdg = git：XDG 配置文件夹下的配置、属性和忽略规则
rules-place-git-system = git：系统配置
rules-place-bash = bash：启动文件（登录、交互、登出）
rules-place-bash-sourced = bash：由发行版的 ~/.bashrc 读入（Debian、Fedora）
rules-place-readline = readline（bash 的行编辑器）：按键绑定、$include
rules-place-zsh = zsh：启动文件（在主目录或 $ZDOTDIR 中）
rules-place-oh-my-zsh = zsh：Oh My Zsh，在安装时由 ~/.zshrc 读入
rules-place-fish = fish：config.fish、conf.d、functions
rules-place-sh = sh、dash、ksh、mksh：启动文件
rules-place-csh = csh、tcsh：启动文件
rules-place-session = 桌面会话：登录时运行
rules-place-ssh = ssh：配置（ProxyCommand、LocalCommand）和 authorized_keys
rules-place-shells-system = 各个 shell：系统范围的启动文件
