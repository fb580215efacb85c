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
