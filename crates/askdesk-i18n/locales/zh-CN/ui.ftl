# 页面用语（ui/*.js 与 ui/index.html）。

language-name = 简体中文

## 窗口框架（ui/index.html）

queue-toggle =
    .aria-label = 显示等待中的请求
    .title = 等待中的请求
sidebar =
    .aria-label = 请求
nav-waiting = 等待中
queue-list =
    .aria-label = 等待中的请求
rules-notice = ⚠ 规则文件有错误
nav-history = 历史
nav-rules = 规则
nav-connect = 连接
nav-devices = 设备
sidebar-dnd = 勿扰
    .title = 开启时，新问题交给下一个回答者（或以 NO_PROVIDER 失败）
sidebar-notify-only = 仅通知
    .title = { notify-only-title }
sidebar-without-focus = 显示但不抢焦点
    .title = 问题打开的窗口不会夺走你正在使用的键盘焦点
sidebar-language = 语言
    .title = askdesk 自身用语的语言；代理的问题保持原文
language-system = 跟随系统（{ $language }）
language-fixed = 本次运行由 ASKDESK_LANG 设定
idle-title = 没有等待中的问题
idle-text = 代理向你提问时，问题会出现在这里并弹出通知。关闭此窗口后 askdesk 仍在托盘中运行。
sent-title = 已发送
sent-text = 你的回答已送达代理。此窗口会自动关闭。
keys-hint = 1–9 选择 · Tab 移动 · Enter 提交 · Esc 隐藏
dismiss = 驳回
    .title = 取消整个请求：代理会得知你拒绝了
always = 在此处总是这样回答
    .title = 提交，并保存一条规则：今后此项目中相同的请求都这样回答（保存前你会先看到它）
submit = 提交
close-ended = 关闭
    .title = 关闭这个已结束的问题：你输入的内容保留在历史中
history-title = 历史
history-search =
    .placeholder = 搜索问题、回答、计划…
    .aria-label = 搜索历史
history-filter-agent = 代理
history-all-agents = 所有代理
history-filter-answerer = 回答者
history-anyone = 任何人
history-filter-outcome = 结果
history-all-outcomes = 所有结果
rules-title = 规则
confirm-title = 在浏览器中打开此链接？
confirm-cancel = 取消
confirm-ok = 在浏览器中打开

## 仅通知（ui/choices.js）

notify-only-forced = 本次运行由 --notify-only 或 ASKDESK_NOTIFY_ONLY 设定
notify-only-title = 新问题会弹出通知；只有你打开时窗口才会打开
setting-not-kept = 设置未能保存：{ $error }

## 时间（ui/dom.js）

waited-just-now = 刚刚
waited-minutes = { $minutes } 分钟
waited-hours = { $hours } 小时
waited-hours-minutes = { $hours } 小时 { $minutes } 分钟
waited-days = { $days } 天
day-today = 今天
day-yesterday = 昨天
day-on = 于 { $date }

## 队列与提问者（ui/app.js）

queue-toggle-waiting = { $waiting ->
        [0] 显示等待中的请求（无）
       *[other] 显示等待中的请求（{ $waiting } 个等待中）
    }
queue-ended = 已结束
queue-progress =
    .title = 本批已回答的问题
queue-rule-title = 规则“{ $rule }”将{ $action }
queue-rule-held = 规则已暂停
rule-differs = 你的选择不同：你选了 { $ours }，规则将回答 { $theirs }。
rule-differs-in = 你的选择不同：对“{ $question }”你选了 { $ours }，规则将回答 { $theirs }。
rule-differs-more = （另有 { $more } 个问题不同。）
rule-differs-nothing = 无
asker-asks = { $questions ->
        [1] 提问
       *[other] 提了 { $questions } 个问题
    }
asker-asked = { $questions ->
        [1] 问过
       *[other] 问过 { $questions } 个问题
    }
ended-said = { $said }。
ended-note = 没有发送任何内容。你输入的内容留在这里可供复制，也保存在历史中，直到你关闭它。
age-asked = 提问于
age-waiting = 已等待
chip-agent-id = 代理 ID
deadline-hold = 暂停
deadline-release = 恢复
deadline-not-held = 未能暂停：{ $error }
deadline-held-before = 规则“{ $rule }”本会{ $action }：已被你暂停，剩余
deadline-held-after = 。在你恢复之前它会一直等待。
deadline-will-before = 规则“{ $rule }”将{ $action }，剩余
deadline-will-after = ，除非你先回答
keys-pick = 1–{ $digits } 选择
keys-pick-one = 1 选择
keys-send = Ctrl+Enter 发送
keys-tab = Tab 移动
keys-esc = Esc 隐藏
use-again = 再次使用
draft-not-kept = 窗口关闭后你输入的内容不会保留：{ $error }
too-late = 太迟了：在你的回答到达之前，代理已撤回这个问题。
too-late-kept = 太迟了：在你的回答到达之前，代理已撤回这个问题。它保留在历史中。
not-sent = 未发送：{ $error }
answer-missing = { $missing ->
        [1] 请回答或跳过高亮的问题。
       *[other] 请回答或跳过 { $missing } 个高亮的问题。
    }
sent-answer = 回答已发送。
sent-feedback = 反馈已发送。
sent-feedback-answers = 反馈与回答已发送。
rule-saved = 规则已保存。
always-save = 保存规则并提交
dismissed = 已驳回：代理已得知你拒绝了。
note-close = 关闭
    .aria-label = 关闭此通知
note-answered = 规则“{ $rule }”回答了 { $who } 的问题“{ $question }”：{ $answer }。
note-acted = 规则“{ $rule }”处理了 { $who } 的问题“{ $question }”：{ $action }。
note-history = 在历史中查看
history-not-yet = 该请求（尚）不在历史中。
history-unavailable = 历史不可用：{ $error }
rules-file-open = 规则文件已在编辑器中打开：保存后规则会显示在这里。
not-opened = 未能打开：{ $error }
rules-unavailable = 规则不可用：{ $error }
rule-mode-now = 规则“{ $name }”现在为 { $mode }。
not-changed = 未更改：{ $error }
link-not-opened = 无法打开链接：{ $error }
not-dismissed = 未驳回：你已输入了回答。点击“驳回”以放弃它。
elsewhere-where = 已在 { $device } 上回答
elsewhere-toast = 已在 { $device } 上回答：{ $who } 的问题。
elsewhere-who = { $who } 的问题已在那里回答。

## 问题（ui/question.js）

other-placeholder-free = 输入你的回答…
other-placeholder-multi = 补充你自己的内容…
other-placeholder-single = 或者输入你自己的回答…
other-aria = 对以下问题的其他回答：{ $question }
answer-aria = 对以下问题的回答：{ $question }
recommended = 推荐
option-image = { $option } 的图片
other = 其他
skip = 跳过此问题
undo-skip = 撤销跳过
skipped-note = 已跳过 — 代理不会收到这个问题的回答。
kept-note = 你输入的内容已保留：清空它，或点击“跳过”，才能跳过此问题。
choose-any = 可多选
choose-one = 单选

## 计划审阅（ui/plan.js）

plan-doc =
    .aria-label = 计划。J 和 K 在段落间移动，C 对选中的段落发表评论。
plan-comment-block = 评论此段落 (C)
plan-comment-selection = 评论所选内容 (C)
plan-what-added = 新增
plan-what-changed = 修改
plan-what-removed = 删除
plan-what-moved = 移动
plan-removed-title = 已删除：{ $path }
plan-carried = 沿用自你上次的审阅
plan-edit = 编辑
plan-remove = 移除
plan-edit-on = 编辑对 { $path } 的评论
plan-remove-on = 移除对 { $path } 的评论
plan-outdated = 已过时
plan-outdated-small = 已过时
plan-last-review = 上次审阅
plan-outdated-why = 此评论之后该段落已改动
plan-carry = 沿用
plan-resolve = 已解决
plan-comment-placeholder = 你对计划这一部分的评论…
plan-comment-on = 评论 { $path }
plan-the-block = 该段落
plan-too-long = 太长了：一条评论最多 { NUMBER($max, useGrouping: 0) } 字节（这条有 { NUMBER($bytes, useGrouping: 0) } 字节）。请缩短或拆分。
plan-bytes = { NUMBER($bytes, useGrouping: 0) } / 最多 { NUMBER($max, useGrouping: 0) } 字节
plan-editor-keys = Ctrl+Enter 保存 · Esc 离开输入框
plan-cancel = 取消
plan-save-comment = 保存评论
plan-changes-nav =
    .aria-label = 自上次审阅以来的改动
plan-changes = 改动
plan-changes-keys = N / P
    .title = N：下一处改动 · P：上一处改动
plan-comments-empty = 选中一个段落（J/K 或点击）后按 C，或在其中选中文字，即可评论。
plan-from-last-review = 来自你上次的审阅
plan-gone = 已不在计划中
plan-comments-go = { $comments ->
        [1] 你的评论会随反馈一起发回，并引用计划原文。
       *[other] 你的 { $comments } 条评论会随反馈一起发回，并引用计划原文。
    }
plan-version = 第 { $version } 版
plan-version-decision = 第 { $version } 版：{ $decision }
plan-asked-at = 提问于 { $when }
plan-back-to = 回到第 { $version } 版
plan-show-clean = 显示干净的计划
plan-show-changes = 显示改动
plan-change-first = { $count } 个段落{ $what }
plan-change-more = { $count } 个{ $what }
plan-changes-since = 自第 { $version } 版以来的改动
plan-no-changes-since = 自第 { $version } 版以来没有改动
plan-you-asked = 你上次的要求
plan-earlier = { " " }· 更早：
plan-outline =
    .aria-label = 计划大纲
plan-contents = 目录
plan-send-feedback = 发送反馈 · 继续规划
plan-send-option = 发送“{ $option }”
plan-approving-drops = 批准将丢弃{ $what }。
plan-feedback-placeholder = 需要改什么？你的反馈会代替选项发回给代理。
plan-feedback-aria = 对计划的反馈
plan-sends-skipped = 已跳过：此计划不发送任何内容
plan-sends-instead = 将发送：你的反馈（代替选项）
plan-sends-labels = 将发送：{ $labels }
plan-sends-labels-feedback = 将发送：{ $labels } 以及你的反馈
plan-sends-feedback = 将发送：你的反馈
plan-sends-nothing = 尚未选择
plan-feedback = 反馈
plan-comments-panel =
    .aria-label = 对计划的评论
plan-comments = 评论
plan-kicker = 待审阅的计划
plan-keys = J/K 选择段落 · C 评论
plan-image = 计划的图片
plan-key-select = J/K 选择段落
plan-key-comment = C 评论
plan-key-changes = N/P 改动
plan-pending-feedback = 你的反馈
plan-pending-comments = { $count } 条评论
plan-pending-pictures = { $count } 张图片
plan-picture-label = 你给计划的图片
plan-drop-title = 批准并丢弃{ $what }？
plan-drop-text = 此审阅只接受批准或反馈之一：批准将丢弃{ $what }。
plan-drop-send-itself = { $items ->
        [1] 如要改为发送它，请返回并使用“发送反馈”。
       *[other] 如要改为发送它们，请返回并使用“发送反馈”。
    }
plan-drop-submit = { $items ->
        [1] 如要改为发送它，请返回并提交。
       *[other] 如要改为发送它们，请返回并提交。
    }
plan-go-back = 返回
plan-drop-ok = { $items ->
        [1] 批准并丢弃它
       *[other] 批准并丢弃它们
    }
plan-notes-title = { $comments ->
        [1] 随批准一起发送你的评论？
       *[other] 随批准一起发送你的 { $comments } 条评论？
    }
plan-notes-text = 此审阅可以随批准附带备注：你的 { $comments } 条评论会引用计划原文，与批准一起发回。
plan-notes-send = { $comments ->
        [1] 批准并把你的评论作为备注发送
       *[other] 批准并把你的 { $comments } 条评论作为备注发送
    }
plan-notes-drop = 批准，不附评论

## 历史（ui/history.js）

history-nothing-matches = 没有匹配的内容。
history-nothing-yet = 还没有任何提问。
history-show-more = 再显示 { $count } 条
history-newest = 最新的 { $shown } 条，共 { $matching } 条。
history-today = 今天
history-yesterday = 昨天
history-by = 回答者
history-when =
    .title = 提问于 { $asked }，处理于 { $settled }
history-plan-versions = 计划 · { $versions } 个版本
history-show-all = 显示全部
history-show-line = 只显示一行
history-draft = 草稿，未发送
history-answer-picture = 回答中的图片
history-draft-picture = 草稿中的图片，未发送
history-images-omitted = { $images ->
        [1] 它的图片未保存在历史中：超过 1 MiB
       *[other] 它的 { $images } 张图片未保存在历史中：超过 1 MiB
    }
history-make-rule = 生成规则
history-rule-saved = 规则已保存
history-was-skipped = 已跳过

## 规则（ui/rules.js）

rules-mode-on = 开启
    .title = 规则会直接处理
rules-mode-shadow = 影子
    .title = 规则只给出建议，由你决定
rules-mode-off = 关闭
    .title = 规则被忽略
rules-mode-aria = 规则 { $name } 的模式
rules-no-folder = 没有配置文件夹：回答规则已关闭。
rules-error-title = 规则文件有错误
rules-error-at = 第 { $line } 行，第 { $column } 列：{ $problem }
rules-error-kept = { $rules ->
        [0] 在修复之前，没有任何规则生效。
       *[other] 在修复之前，上次正确的规则仍然生效：即下面的 { $rules } 条规则。
    }
rules-list-none = 没有规则。
rules-empty = 还没有规则。规则会回答它匹配的问题，这些问题就不会再来找你；规则写在规则文件中。例如，在某个项目中运行测试总是可以的：
rules-empty-from-answer = 也可以点击{ submit }旁边的“{ always }”，或在{ history-title }中点击“{ history-make-rule }”，从一次回答生成规则。
rules-open-file = 打开规则文件
rules-line = 第 { $line } 行
rules-matches = 匹配
rules-does = 动作
rules-after = 延时
# 中文不分单复数；选择器只为与英文的变量一致。
rules-count-hits = { $count ->
       *[other] 次命中
    }
    .title = 此规则现在适用的已记录请求
rules-count-acted = 次处理
    .title = 此规则处理过的请求
rules-count-agreed = 次一致
    .title = 你的处理与此规则相同的请求
rules-count-differed = 次不同
    .title = 你的处理与此规则不同的请求
rules-suggests = 规则“{ $rule }”（影子）建议：{ $says }
rules-use = 采用
rules-used = 已采用

## 规则预览（ui/rule_preview.js）

rule-preview-save = 保存规则
rule-preview-drafting = 正在起草规则…
rule-preview-cancel = 取消
rule-preview-close = 关闭
rule-preview-none = 无法生成规则：{ $why }。
rule-preview-not-offered = 不可用：{ $why }。
rule-preview-scope = 这样回答
rule-preview-any-number = 任意数字
rule-preview-any-name = 任意名称（字母、数字、_ . / -）
rule-preview-shadow-first = 先以影子模式试用（它只建议，由你决定）
rule-preview-says-shadow = 在影子模式下，规则只在问题下方给出建议答案；仍由你决定。
rule-preview-says-on = 从现在起，此项目中的这类请求都会这样回答，不再询问你。
rule-preview-path-before = 规则会添加到
rule-preview-path-after = 的末尾。
rule-preview-file-problem = 规则文件有问题，修复之前保存会被拒绝：{ $problem }
rule-preview-matched = { $count ->
        [0] 没有过去的请求
       *[other] { $count } 个过去的请求
    }
rule-preview-matched-none = 它不会匹配历史中的任何内容。
rule-preview-matched-title = 在历史中，它会匹配 { $matched }：
rule-preview-who-by = { $who }，由 { $by } 回答
rule-preview-more = 以及更早的 { $more } 个

## 连接（ui/connect.js）

connect-title = 连接你的代理
connect-welcome = 欢迎使用 askdesk。连接你使用的代理后，它们的问题和权限请求会来到这里，而不是终端。在你看过改动之前，不会写入任何内容。
connect-unavailable = 连接不可用：{ $error }
connect-connected = 已连接
connect-outdated = 需要更新
connect-not-connected = 未连接
connect-error = 无法读取它的设置
connect-not-installed = 未安装
connect-update = 更新
connect-connect = 连接
connect-disconnect = 断开
connect-via-hook = 权限请求、计划、问题
connect-via-mcp = ask_user_question 与 review_plan 工具
connect-install-first = 没有 { $folder }：请先安装 { $client }
connect-other-title = 其他 MCP 客户端
connect-other-text = Cursor 以及其他带有 mcpServers 设置的客户端：把这段内容加到它们的设置文件中。
connect-copy = 复制
connect-copied = 已复制
connect-not-copied = 未能复制：请选中文本后按 Ctrl+C。
connect-unchanged = { $file } 已经是这样；无需改动。
connect-write = 写入此改动
connect-cancel = 取消
connect-diff-connecting = 连接会改动 { $file }：
connect-diff-disconnecting = 断开会改动 { $file }：
connect-backup = 原文件已保存为 { $file }。
connect-next = 还需要做的：
connect-autostart = 登录时在托盘中启动 askdesk
connect-autostart-on = 登录时 askdesk 会在托盘中启动。
connect-autostart-off = 登录时 askdesk 不再启动。
connect-autostart-available = 应用在托盘中等待，代理随时都能向你提问。
connect-autostart-from-source = 从源码安装：登录启动项由安装包添加。

## 设备（ui/devices.js）

devices-title = 设备
devices-unavailable = 设备不可用：{ $error }
devices-enable = 用手机回答
devices-enable-text = 已配对的手机能看到这里等待中的问题并可以回答，只经过你自己的网络：不经过任何他人的服务器。权限请求仍留在电脑上处理。
devices-listen-on = 监听地址
devices-choose-address = 选择一个地址…
devices-address = { $ip } — { $kind }（{ $interface }）
devices-kind-tailnet = tailnet
devices-kind-lan = 局域网
devices-kind-loopback = 仅限本机
devices-kind-other = 其他网络
devices-port = 端口
devices-cert = 证书（PEM）
devices-cert-placeholder = askdesk 自己的证书颁发机构
devices-key = 证书私钥（PEM）
devices-key-placeholder = 仅在使用你自己的证书时填写
devices-address-hint = tailnet 地址无论手机在哪里都能访问，且只允许你的设备连接；局域网地址则对该网络中的所有设备开放。askdesk 从不在所有网络接口上监听。
devices-apply = 应用
devices-save = 保存
devices-serving = 手机访问地址：
devices-answering-at = 手机可以在 { $origin } 回答了。
devices-answering-off = 手机不能再回答了。
devices-wake = 唤醒手机
devices-wake-show = 在锁屏上显示问题（仅文字和选项；否则显示“有代理在等待”）
devices-quiet-from = 免打扰时段：从
devices-quiet-to = 到
devices-idle-before = 仅当这台电脑锁定或空闲超过
devices-idle-after = 分钟时
devices-wake-hint = 权限请求的内容从不显示在锁屏上。当这台电脑无法判断你是否在用它时，会唤醒手机。
devices-push-woken = 通过通知唤醒
devices-push-lost = 推送服务于 { $when } 停止了通知（{ $status }）：在手机上打开页面即可重新开启
devices-push-unsubscribed = 未订阅通知
devices-trust-title = 你的手机还不信任这台电脑
devices-trust-why = 这台电脑的证书来自 askdesk 自己的证书颁发机构，在你安装它之前没有手机会信任它。在此之前，手机浏览器会对页面发出警告，也无法配对。
devices-trust-scan = 用手机扫描此二维码，接受一次警告，然后从打开的页面下载证书：
devices-trust-iphone = iPhone：
devices-trust-iphone-steps = 在“设置”中安装下载的描述文件，然后在 设置 → 通用 → 关于本机 → 证书信任设置 中开启完全信任。
devices-trust-android = Android：
devices-trust-android-steps = 设置 → 安全 → 加密与凭据 → 安装证书 → CA 证书。
devices-trust-own-cert = 使用你自己的证书（tailscale cert、你的域名）时，无需安装任何内容。
devices-trust-qr = 安装 askdesk 证书颁发机构的页面的二维码
devices-paired = 已配对的手机
devices-none-paired = 没有已配对的手机。
devices-add = 添加手机
devices-add-title = 显示供手机相机扫描的二维码
devices-add-off-title = 请先开启“{ devices-enable }”
devices-paired-at = 配对于 { $when }
devices-last-seen = 最近连接于 { $when }
devices-never-seen = 从未连接
devices-passkey-allowed = 现在可以添加通行密钥
devices-passkey = 已有通行密钥
devices-no-passkey = 没有通行密钥
devices-allow-passkey = 允许添加通行密钥
devices-allow-passkey-title = 允许这部手机在接下来 5 分钟内注册一个通行密钥（指纹、面容或 PIN）：批准权限请求需要它
devices-passkey-allowed-toast = { $device } 可以在接下来 5 分钟内添加通行密钥。
devices-not-allowed = 未允许：{ $error }
devices-revoke = 撤销
devices-revoked-toast = { $device } 不能再回答了。
devices-not-revoked = 未撤销：{ $error }
devices-cannot-pair = 现在无法配对：{ $error }
devices-cancel = 取消
devices-close = 关闭
devices-valid-for = 有效期还剩 { $time }
devices-expired = 在手机使用之前，代码已过期。请重新点击“{ devices-add }”。
devices-pair-scan = 打开手机相机，对准此二维码。只有在这里扫描它的手机才能配对。
devices-pair-qr = 配对地址的二维码
devices-asks-to-pair = 请求配对。手机上显示的是这个代码吗？
devices-codes-differ = 如果代码不一致，请点击“{ devices-cancel }”：可能有另一部手机扫描了二维码。
devices-codes-match = 代码一致
devices-is-paired = { $device } 已配对。
devices-not-paired = 未配对：{ $error }

## 图片（ui/images.js）

image = 图片
image-yours = 你的图片
image-numbered = { $label }（第 { $number } 张，共 { $count } 张）
image-enlarge = { $name }：放大
image-remove = 移除
image-remove-aria = 移除 { $name }
