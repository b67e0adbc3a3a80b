"""Conversation implementations: in this process (`LocalConversation`) and on an agent server
(`RemoteConversation`, its state, events and catalogue), and what they are built from."""
