/* cafÃ© ÿş À¯ í € ô€€ â‚ */
Â…Â›31m C1
[2J]0;title ESC
 end