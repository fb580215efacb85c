# 桌面应用在页面之外的用语：通知与托盘图标。

## 通知

notify-asks = { $agent } 提问
notify-more = （还有 { $more } 个问题）
notify-rule-will = 规则“{ $rule }”将在 { $left } 后{ $action }，除非你先回答。
notify-open = 打开
notify-hold = 暂停
notify-waiting = { $count } 个问题在等待
notify-and-more = 还有 { $more } 个
notify-gone-title = 这个问题已不再等待
notify-gone-body = 它在你点击之前已有结果；没有发送任何内容。
notify-seconds = { $seconds } 秒
notify-minutes = { $minutes } 分钟
notify-hours = { $hours } 小时
notify-hours-minutes = { $hours } 小时 { $minutes } 分钟

## 托盘图标

tray-open = 打开 askdesk
tray-dnd = 勿扰
tray-quit = 退出 askdesk
tray-waiting = { $waiting ->
        [0] askdesk — 没有等待中的问题
       *[other] askdesk — { $waiting } 个问题等待中
    }

## 应用为页面组成的句子

desktop-history-outcome-answered = 已回答
desktop-history-outcome-dismissed = 已驳回
desktop-history-outcome-withdrawn = 已撤回
desktop-history-outcome-failed = 失败
desktop-history-outcome-late-answer = 迟到的回答
# Who answered, in History's "by" column and its filter, when it was the desktop's dialog.
desktop-history-you = 你
desktop-past-you = 你回答了 { $what }
desktop-past-rule = 规则“{ $rule }”回答了 { $what }
desktop-past-other = { $who } 回答了 { $what }
desktop-past-unknown = 回答了 { $what }
desktop-rule-note-answered = 规则“{ $rule }”已回答：{ $answer }
desktop-rule-note-acted = 规则“{ $rule }”：{ $action }
desktop-rule-note-about = { $who } 问：{ $question }
desktop-answer-skipped = 已跳过
desktop-ended-withdrew = { $who } 撤回了这个问题
desktop-ended-disconnected = { $who } 已断开连接（进程已结束）
desktop-plan-approved-notes = 已批准并附意见
desktop-plan-approved = 已批准
desktop-plan-feedback-sent = 已发送反馈
desktop-plan-chose = 选择了“{ $label }”
desktop-plan-skipped = 已跳过
desktop-plan-no-answer = 没有回答
desktop-plan-dismissed = 已驳回
desktop-plan-withdrawn = 已撤回
desktop-plan-answered-on = 已在 { $device } 上回答
desktop-plan-decided-by = 由 { $by } 决定
desktop-draft-exact = 这个问题本身
desktop-draft-similar = 来自 { $agent } 的类似问题
desktop-draft-header = 所有标题为“{ $header }”的问题
desktop-draft-header-none = 所有带这个标题的问题
desktop-draft-not-answered = 这个请求没有被回答，所以没有可以重复的回答
desktop-draft-by-rule = 这个请求是由规则（{ $rule }）回答的，而不是你
desktop-rules-match-everything = 所有请求
desktop-rules-match-cwd = cwd 位于 { $cwd } 之下
desktop-the-agent = 代理

## 页面的命令做不到时的说明

desktop-command-picture-failed = 无法处理这张图片
desktop-command-picture-refused = 这张图片没有附上：{ $refusal }
desktop-command-no-rules-file = 没有规则文件
desktop-command-no-journal = 没有历史日志
desktop-command-entry-gone = 这条记录已不在历史中
desktop-command-link-scheme = 不会打开 { $scheme } 链接
desktop-command-not-waiting = 这个请求已不再等待
desktop-command-no-catalogue = askdesk 没有 { $name } 的语言目录
desktop-phone-choose-address = 请选择手机访问这台电脑所用的地址
desktop-phone-certificate-pair = 请同时提供证书和它的密钥，或都不提供
desktop-phone-no-config-dir = 没有配置目录（未设置 HOME）
desktop-phone-one-address = 请选择一个地址：这里不提供在所有网络接口上监听
desktop-phone-idle-limit = “仅当这台电脑空闲时”最多为 { $minutes } 分钟
desktop-phone-no-device = 没有这个名称的已配对设备
desktop-phone-turn-on = 请先开启“用手机回答”
desktop-phone-no-qr = 这个网址放不进二维码
desktop-phone-stopped = 远程服务已停止：请重新开始配对

## 回答、计划评论或草稿未被接受的原因

desktop-request-gone = 这个请求已不再等待：代理在回答送达前撤回了它
desktop-comment-no-plan = 这个请求没有待审阅的计划
desktop-comment-no-block = 第 { $index } 条评论：计划中没有块 { $key }
desktop-comment-bad = 你在“{ $path }”上的第 { $index } 条评论{ $problem }
desktop-comment-empty = 是空的
desktop-comment-too-long = 太长：{ $bytes } 字节，而一条评论最多 { $limit } 字节（纯文本大约同样多的字符）；请缩短或拆分
desktop-comment-quote-too-long = 引用了过多计划内容：最多 { $limit } 字节；请少选一些文字，或对整个块评论
desktop-comment-too-many = 一次最多只能发送 { $limit } 条评论
desktop-comment-no-past = 上一次审阅没有第 { $index } 条评论
desktop-comment-cannot-carry = 上一次审阅的第 { $index } 条评论所在的计划部分已不存在；它只能被标为已解决
desktop-draft-not-object = 草稿必须是 JSON 对象
desktop-draft-too-large = 草稿最多 { $limit } 字节（这份有 { $bytes } 字节）
desktop-draft-too-many-pictures = 一个回答最多可带 { $limit } 张图片
desktop-picture-not-attached = 这张图片没有附上：{ $error }
